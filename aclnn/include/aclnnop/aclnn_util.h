/* SPDX-License-Identifier: Apache-2.0 */
/* llmk aclnn layer: the export macro of the operator entry points. */
#ifndef LLMK_ACLNNOP_ACLNN_UTIL_H
#define LLMK_ACLNNOP_ACLNN_UTIL_H

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#endif
