/* SPDX-License-Identifier: Apache-2.0 */
/* llmk aclnn layer: aclnn library init/finalize, and the base objects (acl_meta.h). */
#ifndef LLMK_ACLNN_ACLNN_BASE_H
#define LLMK_ACLNN_ACLNN_BASE_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Optional; configPath is ignored. Both return ACLNN_SUCCESS. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif
