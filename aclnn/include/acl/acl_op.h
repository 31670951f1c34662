/* SPDX-License-Identifier: Apache-2.0 */
/* llmk aclnn layer: single-operator (acl_op) API. Empty compatibility header: the CPU
 * layer implements the aclnn two-phase entry points, not aclopExecute. */
#ifndef LLMK_ACL_ACL_OP_H
#define LLMK_ACL_ACL_OP_H

#include "acl_base.h"
#include "acl_rt.h"

#endif
