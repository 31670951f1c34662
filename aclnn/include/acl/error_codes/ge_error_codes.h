/* SPDX-License-Identifier: Apache-2.0 */
/* llmk aclnn layer: graph-engine error codes (CANN's numeric values). The CPU layer has
 * no graph engine and returns none of them; they are here for programs that name them. */
#ifndef LLMK_ACL_ERROR_CODES_GE_ERROR_CODES_H
#define LLMK_ACL_ERROR_CODES_GE_ERROR_CODES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static const uint32_t ACL_ERROR_GE_PARAM_INVALID = 145000U;
static const uint32_t ACL_ERROR_GE_EXEC_NOT_INIT = 145001U;
static const uint32_t ACL_ERROR_GE_MEMORY_ALLOCATION = 245000U;
static const uint32_t ACL_ERROR_GE_INTERNAL_ERROR = 545000U;

#ifdef __cplusplus
}
#endif

#endif
