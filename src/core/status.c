/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"
#include "llmk/llmk.h"

static _Thread_local char last_error[512];

const char *llmk_status_string(llmk_status status) {
  switch (status) {
#define LLMK_X_CASE(name, value, text) \
  case name:                           \
    return text;
    LLMK_STATUS_LIST(LLMK_X_CASE)
#undef LLMK_X_CASE
  }
  return "unknown status";
}

const char *llmk_last_error(void) {
  return last_error;
}

llmk_status llmk__error(llmk_status status, const char *op, const char *fmt, ...) {
  int n = snprintf(last_error, sizeof last_error, "%s: ", op);
  if (n < 0 || (size_t)n >= sizeof last_error) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
  va_end(ap);
  return status;
}

unsigned llmk_version(void) {
  return LLMK_VERSION;
}
const char *llmk_version_string(void) {
  return LLMK_VERSION_STRING;
}
