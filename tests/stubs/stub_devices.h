/* Shared by the stub vendor libraries (nvml_stub.c, dcmi_stub.c,
 * rocm_smi_stub.c): reading simulated devices and injected failures from the
 * environment.
 *
 * Every stub re-reads its variables on each call, never at load time: a test
 * sets them with setenv() and a dlopen()ed library may stay cached between
 * tests.
 *
 * Device lists:  "<record>;<record>;..."  with  <record> = "f1,f2,..."
 *   Fields are taken verbatim (no quoting; a field cannot contain ',' or ';').
 *   Empty records are skipped. Missing trailing fields read as "".
 * Failure lists: "<function>[,<function>...]": each named function returns
 *   the stub's error code (…_FAIL) or its "not supported" code
 *   (…_UNSUPPORTED) instead of doing its work.
 * State files (…_STATE, for what outlives a process, such as MIG instances
 *   a prolog makes and an epilog removes): plain text, one record a line,
 *   read whole on every call and rewritten whole (write, then rename) on
 *   every change. A missing file is an empty state.
 */
#ifndef VGPU_TESTS_STUB_DEVICES_H_
#define VGPU_TESTS_STUB_DEVICES_H_

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define STUB_MAX_DEVICES 32
#define STUB_MAX_FIELDS 10
#define STUB_FIELD_LEN 96

typedef struct {
  char field[STUB_MAX_FIELDS][STUB_FIELD_LEN];
  int count;
} stub_record;

/* Parses the list in environment variable `var` into `out` (at most
 * STUB_MAX_DEVICES records); returns how many. Unset or empty: 0. */
static inline int stub_read_records(const char* var, stub_record* out) {
  const char* text = getenv(var);
  int n = 0;
  if (text == NULL) return 0;
  while (*text != '\0' && n < STUB_MAX_DEVICES) {
    const char* end = strchr(text, ';');
    size_t len = end != NULL ? (size_t)(end - text) : strlen(text);
    stub_record* r = &out[n];
    size_t i = 0;
    memset(r, 0, sizeof(*r));
    r->count = 0;
    if (len > 0) {
      r->count = 1;
      for (size_t k = 0; k < len; ++k) {
        char c = text[k];
        if (c == ',') {
          if (r->count == STUB_MAX_FIELDS) break;
          r->count++;
          i = 0;
        } else if (i + 1 < STUB_FIELD_LEN) {
          r->field[r->count - 1][i++] = c;
        }
      }
      n++;
    }
    if (end == NULL) break;
    text = end + 1;
  }
  return n;
}

/* 1 if `function` is listed in environment variable `var`. */
static inline int stub_listed(const char* var, const char* function) {
  const char* text = getenv(var);
  size_t want = strlen(function);
  if (text == NULL) return 0;
  while (*text != '\0') {
    const char* end = strchr(text, ',');
    size_t len = end != NULL ? (size_t)(end - text) : strlen(text);
    if (len == want && strncmp(text, function, len) == 0) return 1;
    if (end == NULL) break;
    text = end + 1;
  }
  return 0;
}

static inline unsigned long long stub_u64(const char* s, int base) { return strtoull(s, NULL, base); }

/* Parses "dddd:bb:dd.f" (any domain width) or "bb:dd.f"; 0 on success. */
static inline int stub_parse_bdf(const char* s, unsigned* domain, unsigned* bus, unsigned* dev, unsigned* fn) {
  *domain = 0;
  if (sscanf(s, "%x:%x:%x.%x", domain, bus, dev, fn) == 4) return 0;
  *domain = 0;
  if (sscanf(s, "%x:%x.%x", bus, dev, fn) == 3) return 0;
  return -1;
}

#define STUB_STATE_MAX 256
#define STUB_STATE_LINE 256

/* Reads the lines of state file `path` into `lines` (at most STUB_STATE_MAX,
 * each cut to STUB_STATE_LINE - 1 bytes, without the newline; empty lines
 * skipped); returns how many. A missing file: 0. */
static inline int stub_state_read(const char* path, char lines[][STUB_STATE_LINE]) {
  FILE* f = fopen(path, "r");
  int n = 0;
  if (f == NULL) return 0;
  while (n < STUB_STATE_MAX && fgets(lines[n], STUB_STATE_LINE, f) != NULL) {
    lines[n][strcspn(lines[n], "\n")] = '\0';
    if (lines[n][0] != '\0') n++;
  }
  fclose(f);
  return n;
}

/* Replaces state file `path` with `text` (via "<path>.tmp" and rename, so a
 * reader never sees half a file); 0 on success. */
static inline int stub_state_write(const char* path, const char* text) {
  char tmp[4096];
  FILE* f;
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) return -1;
  if ((f = fopen(tmp, "w")) == NULL) return -1;
  if (fputs(text, f) < 0) {
    fclose(f);
    return -1;
  }
  if (fclose(f) != 0) return -1;
  return rename(tmp, path);
}

/* Holds state file `path` for a read, change and write: the file is a
 * node's, shared by its devices, whose calls may run at once in several
 * processes. The descriptor to pass to stub_state_unlock (-1 when no lock
 * could be had: the call goes on unguarded). */
static inline int stub_state_lock(const char* path) {
  char lock[4096];
  int fd;
  if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock)) return -1;
  if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) return -1;
  while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  return fd;
}

static inline void stub_state_unlock(int fd) {
  if (fd >= 0) close(fd);
}

#endif /* VGPU_TESTS_STUB_DEVICES_H_ */
