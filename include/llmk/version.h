/* SPDX-License-Identifier: Apache-2.0 */
/* llmk version macros and the run-time version query. */
#ifndef LLMK_VERSION_H
#define LLMK_VERSION_H

#define LLMK_VERSION_MAJOR 0
#define LLMK_VERSION_MINOR 1
#define LLMK_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, as llmk_version() returns it. */
#define LLMK_VERSION \
  (LLMK_VERSION_MAJOR * 10000 + LLMK_VERSION_MINOR * 100 + LLMK_VERSION_PATCH)
#define LLMK_VERSION_STRING "0.1.0"

#endif
