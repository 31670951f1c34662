/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: AscendCL base API (types, errors, data type helpers).
 * Valid C and C++.
 */
#ifndef LLMK_ACL_ACL_BASE_H
#define LLMK_ACL_ACL_BASE_H

#include "acl_base_mdl.h"
#include "acl_base_rt.h"
#include "error_codes/ge_error_codes.h"
#include "error_codes/rt_error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element size in bytes of a data type; 0 for ACL_DT_UNDEFINED, ACL_STRING and the
 * sub-byte types (ACL_INT4, ACL_UINT1, ACL_FLOAT6_*, ACL_FLOAT4_*). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* IEEE binary16 <-> f32, round to nearest even (exact from f16). */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/* The message of the most recent failed call of this layer on the calling thread
 * (for an operator, the native llmk message naming the argument and the values);
 * "" if none failed. Valid until the next failing call on this thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif
