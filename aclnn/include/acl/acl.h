/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: the AscendCL umbrella header, as host programs include it.
 * Runtime subset on the CPU: see acl_rt.h and docs/aclnn.md. Valid C and C++.
 */
#ifndef LLMK_ACL_ACL_H
#define LLMK_ACL_ACL_H

#include "acl_mdl.h"
#include "acl_op.h"
#include "acl_rt.h"

/* Version of this layer's AscendCL subset (aclrtGetVersion returns the same). */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 0
#define ACL_PATCH_VERSION 0

#endif
