/* SPDX-License-Identifier: Apache-2.0 */
/* llmk bench --baseline OLD.json: the cases of an earlier --json output (op, shape,
 * dtype, median_s), read by a small JSON parser that accepts any valid JSON and skips
 * what it does not need, so that files of older and newer versions of the tool load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct jp {
  const char *begin, *s, *end;
  const char *path;
  int err;
} jp;

static void jp_fail(jp *p, const char *what) {
  if (!p->err)
    fprintf(stderr, "llmk bench: --baseline %s: %s at byte %ld\n", p->path, what,
            (long)(p->s - p->begin));
  p->err = 1;
}

static void ws(jp *p) {
  while (p->s < p->end &&
         (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
    p->s++;
}

static bool eat(jp *p, char c) {
  ws(p);
  if (p->s < p->end && *p->s == c) {
    p->s++;
    return true;
  }
  return false;
}

/* A string into out (size n, truncated; NULL: skipped). */
static void parse_string(jp *p, char *out, size_t n) {
  size_t o = 0;
  if (!eat(p, '"')) {
    jp_fail(p, "a string expected");
    return;
  }
  while (p->s < p->end && *p->s != '"') {
    char c = *p->s++;
    if (c == '\\') {
      if (p->s >= p->end) break;
      char e = *p->s++;
      c = e == 'n'   ? '\n'
          : e == 't' ? '\t'
          : e == 'r' ? '\r'
          : e == 'b' ? '\b'
          : e == 'f' ? '\f'
                     : e;
      if (e == 'u') {
        if (p->end - p->s < 4) {
          jp_fail(p, "a bad \\u escape");
          return;
        }
        char hex[5] = {p->s[0], p->s[1], p->s[2], p->s[3], 0};
        char *stop;
        long v = strtol(hex, &stop, 16);
        if (*stop) {
          jp_fail(p, "a bad \\u escape");
          return;
        }
        p->s += 4;
        c = v > 0 && v < 0x80 ? (char)v : '?';
      } else if (!strchr("\"\\/bfnrt", e)) {
        {
          jp_fail(p, "a bad escape");
          return;
        }
      }
    }
    if (out && o + 1 < n) out[o++] = c;
  }
  if (out && n) out[o] = 0;
  if (!eat(p, '"')) jp_fail(p, "an unterminated string");
}

/* A number, or null (NaN). */
static double parse_number(jp *p) {
  ws(p);
  if (p->end - p->s >= 4 && !strncmp(p->s, "null", 4)) {
    p->s += 4;
    return NAN;
  }
  char *stop;
  double v = strtod(p->s, &stop);
  if (stop == p->s) {
    jp_fail(p, "a number expected");
    return NAN;
  }
  p->s = stop;
  return v;
}

static void skip_value(jp *p, int depth);

static void skip_container(jp *p, char close, bool object, int depth) {
  if (eat(p, close)) return;
  do {
    if (object) {
      parse_string(p, NULL, 0);
      if (!eat(p, ':')) {
        jp_fail(p, "':' expected");
        return;
      }
    }
    skip_value(p, depth + 1);
  } while (!p->err && eat(p, ','));
  if (!p->err && !eat(p, close)) jp_fail(p, object ? "'}' expected" : "']' expected");
}

static void skip_value(jp *p, int depth) {
  ws(p);
  if (depth > 64) {
    jp_fail(p, "nesting too deep");
    return;
  }
  if (p->s >= p->end) {
    jp_fail(p, "a value expected");
    return;
  }
  char c = *p->s;
  if (c == '"') {
    parse_string(p, NULL, 0);
    return;
  }
  if (c == '{' || c == '[') {
    p->s++;
    skip_container(p, c == '{' ? '}' : ']', c == '{', depth);
    return;
  }
  static const char *const words[3] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++)
    if ((size_t)(p->end - p->s) >= strlen(words[i]) &&
        !strncmp(p->s, words[i], strlen(words[i]))) {
      p->s += strlen(words[i]);
      return;
    }
  parse_number(p);
}

static int add_case(bench_env *env, const bench_base_case *c, int *cap) {
  if (env->n_base == *cap) {
    *cap = *cap ? 2 * *cap : 32;
    bench_base_case *n = realloc(env->base, (size_t)*cap * sizeof *n);
    if (!n) return -1;
    env->base = n;
  }
  env->base[env->n_base++] = *c;
  return 0;
}

/* One case object: its labels and median. */
static void parse_case(jp *p, bench_env *env, int *cap) {
  bench_base_case c;
  memset(&c, 0, sizeof c);
  c.median_s = NAN;
  if (!eat(p, '{')) {
    jp_fail(p, "a case object expected");
    return;
  }
  if (!eat(p, '}')) {
    do {
      char key[32];
      parse_string(p, key, sizeof key);
      if (!eat(p, ':')) {
        jp_fail(p, "':' expected");
        return;
      }
      if (!strcmp(key, "op"))
        parse_string(p, c.op, sizeof c.op);
      else if (!strcmp(key, "shape"))
        parse_string(p, c.shape, sizeof c.shape);
      else if (!strcmp(key, "dtype"))
        parse_string(p, c.dtype, sizeof c.dtype);
      else if (!strcmp(key, "median_s"))
        c.median_s = parse_number(p);
      else
        skip_value(p, 2);
    } while (!p->err && eat(p, ','));
    if (!p->err && !eat(p, '}')) {
      jp_fail(p, "'}' expected");
      return;
    }
  }
  if (!p->err && c.op[0] && add_case(env, &c, cap)) jp_fail(p, "out of memory");
}

int bench_baseline_load(bench_env *env, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "llmk bench: --baseline %s: out of memory\n", path);
    return -1;
  }
  buf[n] = 0;
  jp p = {buf, buf, buf + n, path, 0};
  int ccap = 0;
  bool seen = false;
  if (!eat(&p, '{')) jp_fail(&p, "not a JSON object");
  if (!p.err && !eat(&p, '}')) {
    do {
      char key[32];
      parse_string(&p, key, sizeof key);
      if (!eat(&p, ':')) jp_fail(&p, "':' expected");
      if (p.err) break;
      if (!strcmp(key, "cases")) {
        seen = true;
        if (!eat(&p, '[')) {
          jp_fail(&p, "cases is not an array");
          break;
        }
        if (!eat(&p, ']')) {
          do parse_case(&p, env, &ccap);
          while (!p.err && eat(&p, ','));
          if (!p.err && !eat(&p, ']')) jp_fail(&p, "']' expected");
        }
      } else {
        skip_value(&p, 1);
      }
    } while (!p.err && eat(&p, ','));
    if (!p.err && !eat(&p, '}')) jp_fail(&p, "'}' expected");
  }
  if (!p.err && !seen) jp_fail(&p, "no \"cases\" array (not an llmk bench --json file)");
  free(buf);
  if (p.err) {
    free(env->base);
    env->base = NULL;
    env->n_base = 0;
    return -1;
  }
  if (!env->base) env->base = calloc(1, sizeof *env->base); /* loaded, no cases */
  return env->base ? 0 : -1;
}

double bench_baseline_find(const bench_env *env, const char *op, const char *shape,
                           const char *dtype) {
  for (int i = 0; i < env->n_base; i++) {
    const bench_base_case *c = &env->base[i];
    if (!strcmp(c->op, op) && !strcmp(c->shape, shape) && !strcmp(c->dtype, dtype))
      return c->median_s;
  }
  return NAN;
}
