/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: model-related base types. The CPU layer runs no offline models;
 * this header exists so that the include structure of CANN's acl_base.h is the same.
 */
#ifndef LLMK_ACL_ACL_BASE_MDL_H
#define LLMK_ACL_ACL_BASE_MDL_H

#include "acl_base_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlDataset aclmdlDataset;

#ifdef __cplusplus
}
#endif

#endif
