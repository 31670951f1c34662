/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: external allocator handles. The CPU layer has no stream-ordered
 * allocator registration; the types exist so that CANN's include structure holds.
 */
#ifndef LLMK_ACL_ACL_RT_ALLOCATOR_H
#define LLMK_ACL_ACL_RT_ALLOCATOR_H

#include "acl_base_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *aclrtAllocatorDesc;
typedef void *aclrtAllocator;
typedef void *aclrtAllocatorBlock;
typedef void *aclrtAllocatorAddr;

#ifdef __cplusplus
}
#endif

#endif
