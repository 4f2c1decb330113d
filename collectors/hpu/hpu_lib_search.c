/* Whether the dynamic loader would find a library by its bare name (hpu_lib_search.h). */
#define _GNU_SOURCE /* memmem, O_CLOEXEC */
#include "hpu_lib_search.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether `name` is a readable file in the folder [dir, dir + len). */
static int file_in(const char* dir, size_t len, const char* name) {
  char p[PATH_MAX];
  size_t n = strlen(name);
  if (len == 0 || len + n + 2 > sizeof p) return 0;
  memcpy(p, dir, len);
  p[len] = '/';
  memcpy(p + len + 1, name, n + 1);
  return access(p, R_OK) == 0;
}

/* Whether the loader's cache (/etc/ld.so.cache) names `name`: its string table holds each path NUL-ended. */
static int in_ld_cache(const char* name) {
  char tail[NAME_MAX + 2];
  size_t n = strlen(name);
  if (n + 2 > sizeof tail) return 0;
  tail[0] = '/';
  memcpy(tail + 1, name, n + 1); /* "/<name>" and its NUL: a whole path component, to the end of the path */
  int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int found = 0;
  if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20)) {
    void* m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      found = memmem(m, (size_t)st.st_size, tail, n + 2) != NULL;
      munmap(m, (size_t)st.st_size);
    }
  }
  close(fd);
  return found;
}

int rt_lib_on_search_path(const char* name, const char* const* dirs, size_t ndirs) {
  const char* llp = getenv("LD_LIBRARY_PATH");
  for (const char* p = llp; p && *p;) {
    const char* end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (file_in(p, len, name)) return 1;
    if (!end) break;
    p = end + 1;
  }
  if (in_ld_cache(name)) return 1;
  for (size_t i = 0; i < ndirs; i++)
    if (file_in(dirs[i], strlen(dirs[i]), name)) return 1;
  return 0;
}
