/* SPDX-License-Identifier: Apache-2.0 */
/* llmk aclnn layer: model (acl_mdl) API. Empty compatibility header: the CPU layer
 * loads no offline models. */
#ifndef LLMK_ACL_ACL_MDL_H
#define LLMK_ACL_ACL_MDL_H

#include "acl_base.h"
#include "acl_rt.h"

#endif
