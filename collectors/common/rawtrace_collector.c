/*
 * Environment, output path, process facts and clocks shared by the collectors; see rawtrace_collector.h.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1
#endif

#include "rawtrace_collector.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int rt_parse_log_level(const char* s) {
  if (!s || !*s) return RT_V_WARN;
  if (isdigit((unsigned char)*s)) {
    int n = atoi(s);
    return n < RT_V_OFF ? RT_V_OFF : n > RT_V_DEBUG ? RT_V_DEBUG : n;
  }
  static const struct {
    const char* name;
    int level;
  } names[] = {{"off", RT_V_OFF},      {"none", RT_V_OFF},    {"quiet", RT_V_OFF}, {"error", RT_V_ERROR},
               {"warn", RT_V_WARN},    {"warning", RT_V_WARN}, {"info", RT_V_INFO}, {"debug", RT_V_DEBUG},
               {"trace", RT_V_DEBUG}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(s, names[i].name)) return names[i].level;
  char msg[200];
  snprintf(msg, sizeof msg, "RAWTRACE_LOG=%.64s is not off, error, warn, info, debug or 0-4; warn is used", s);
  rt_log_line(RT_V_WARN, RT_V_WARN, msg);
  return RT_V_WARN;
}

void rt_log_line(int verbosity, int level, const char* msg) {
  if (level > verbosity || level <= RT_V_OFF) return;
  static const char* const label[] = {"", "error", "warning", "info", "debug"};
  char line[560];
  int n = snprintf(line, sizeof line, "rawtrace[%d]: %s: %s\n", (int)getpid(), label[level > 4 ? 4 : level], msg);
  if (n <= 0) return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  if (len == sizeof line - 1) line[len - 1] = '\n';
  /* A stderr whose reader left, or a file at its size limit, must not end the program (SIGPIPE, SIGXFSZ). */
  (void)rt_write_quiet(STDERR_FILENO, line, len);
}

uint32_t rt_log_chunk_level(int level) {
  return level == RT_V_ERROR ? RT_LOG_ERROR : level == RT_V_WARN ? RT_LOG_WARNING : RT_LOG_INFO;
}

int rt_check_write(int rc, atomic_int* failed, const char* path, int verbosity) {
  if (rc == -EMSGSIZE || rc == -ENOMEM) {
    char msg[160];
    snprintf(msg, sizeof msg, "chunk not written: %s", strerror(-rc));
    rt_log_line(verbosity, RT_V_WARN, msg);
    return rc;
  }
  if (rc < 0 && !atomic_exchange(failed, 1)) {
    char msg[480];
    snprintf(msg, sizeof msg, "writing %.300s failed (%s); recording stops, the file keeps what was written", path,
             strerror(-rc));
    rt_log_line(verbosity, RT_V_ERROR, msg);
  }
  return rc;
}

static void warn_ignored(int verbosity, const char* var, const char* value, const char* what) {
  char msg[400];
  snprintf(msg, sizeof msg, "%s=%s is not %s; ignored", var, value, what);
  rt_log_line(verbosity, RT_V_WARN, msg);
}

size_t rt_env_size(const char* var, size_t def, int verbosity) {
  const char* s = getenv(var);
  if (!s || !*s) return def;
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  double mul = 0;
  if (!errno && end != s && v >= 0) {
    while (*end == ' ') end++;
    switch (tolower((unsigned char)*end)) {
      case 0: mul = 1; break;
      case 'b': mul = 1; end++; break;
      case 'k': mul = 1024.0; end++; break;
      case 'm': mul = 1024.0 * 1024.0; end++; break;
      case 'g': mul = 1024.0 * 1024.0 * 1024.0; end++; break;
      default: break;
    }
    /* A unit may be written K, KB or KiB (binary either way); anything else after it ("64kilo") is not a size. */
    if (mul > 1 && tolower((unsigned char)*end) == 'i') end++;
    if (mul > 1 && tolower((unsigned char)*end) == 'b') end++;
    if (*end) mul = 0;
  }
  if (mul == 0) {
    warn_ignored(verbosity, var, s, "a size");
    return def;
  }
  double r = v * mul;
  return r > (double)(SIZE_MAX / 2) ? SIZE_MAX / 2 : (size_t)r;
}

/* Seconds from `var`: a number, optionally followed by 's', from 0 (or above 0 when `zero_ok` is 0) to 1e6. */
static double env_seconds(const char* var, int verbosity, int zero_ok, double def) {
  const char* s = getenv(var);
  if (!s || !*s) return def;
  char* end = NULL;
  double v = strtod(s, &end);
  const char* rest = end;
  while (rest && *rest == ' ') rest++;
  if (rest && *rest == 's') rest++; /* "2.5s" is 2.5 seconds too; "1x" is not a number of seconds */
  /* At most 1e6 s (11.5 days): the callers turn it into int milliseconds (poll) and ns, which must not overflow. */
  if (end == s || (rest && *rest) || !(zero_ok ? v >= 0 : v > 0) || !(v <= 1e6)) {
    warn_ignored(verbosity, var, s, zero_ok ? "a number of seconds from 0 to 1e6" : "a number of seconds above 0, up to 1e6");
    return def;
  }
  return v;
}

double rt_env_seconds(const char* var, int verbosity) { return env_seconds(var, verbosity, 1, 0); }

double rt_env_timeout(const char* var, double def, int verbosity) { return env_seconds(var, verbosity, 0, def); }

int rt_env_flag(const char* var, int def) {
  const char* s = getenv(var);
  if (!s || !*s) return def;
  return !(!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"));
}

void rt_env_checksum(rt_writer* w, int verbosity) {
  const char* s = getenv("RAWTRACE_CHECKSUM");
  if (!s || !*s || !strcasecmp(s, "xxh64")) return;
  if (!strcasecmp(s, "xxh32")) rt_writer_set_checksum(w, RT_CHUNK_FLAG_XXH32);
  else if (!strcasecmp(s, "crc32")) rt_writer_set_checksum(w, RT_CHUNK_FLAG_CRC);
  else warn_ignored(verbosity, "RAWTRACE_CHECKSUM", s, "xxh64, xxh32 or crc32");
}

int rt_env_int_warn(const char* var, int def, int min, int verbosity) {
  const char* s = getenv(var);
  if (!s || !*s) return def;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  while (end && (*end == ' ' || *end == '\t')) end++;
  if (end == s || *end || v < min || v > INT_MAX) {
    char what[48];
    snprintf(what, sizeof what, "a whole number from %d", min);
    warn_ignored(verbosity, var, s, what);
    return def;
  }
  return (int)v;
}

int rt_env_int(const char* var, int def) {
  const char* s = getenv(var);
  if (!s || !*s) return def;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  return end == s || v < INT_MIN || v > INT_MAX ? def : (int)v;
}

int rt_expand_output(const char* pat, const char* default_name, char* out, size_t cap, uint64_t start_ns) {
  char host[256];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = 0;
  char stamp[32];
  time_t secs = (time_t)(start_ns / 1000000000u);
  struct tm tmv;
  gmtime_r(&secs, &tmv);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
  int rank = rt_env_int("RANK", rt_env_int("LOCAL_RANK", 0));

  char joined[PATH_MAX + 64];
  size_t plen = strlen(pat);
  struct stat sb;
  /* The collectors keep RAWTRACE_OUTPUT in PATH_MAX bytes: a pattern that fills them was cut when copied (%% escapes
   * could make a longer one expand short enough, to a name that lost its end), so it is refused as too long. */
  int cut = plen >= PATH_MAX - 1;
  if (plen > 0 && (pat[plen - 1] == '/' || (stat(pat, &sb) == 0 && S_ISDIR(sb.st_mode)))) {
    int k = snprintf(joined, sizeof joined, "%s%s%s", pat, pat[plen - 1] == '/' ? "" : "/", default_name);
    if (k < 0 || (size_t)k >= sizeof joined) cut = 1;
    pat = joined;
  }
  size_t n = 0;
  const char* p = pat;
  for (; *p && n + 1 < cap; p++) {
    char piece[300];
    if (*p == '%' && p[1]) {
      p++;
      switch (*p) {
        case 'p': snprintf(piece, sizeof piece, "%d", (int)getpid()); break;
        case 'h': snprintf(piece, sizeof piece, "%s", host); break;
        case 'r': snprintf(piece, sizeof piece, "%d", rank); break;
        case 't': snprintf(piece, sizeof piece, "%s", stamp); break;
        case '%': snprintf(piece, sizeof piece, "%%"); break;
        default: snprintf(piece, sizeof piece, "%%%c", *p); break;
      }
    } else {
      piece[0] = *p;
      piece[1] = 0;
    }
    size_t k = strlen(piece);
    if (k > cap - 1 - n) {
      k = cap - 1 - n;
      cut = 1;
    }
    memcpy(out + n, piece, k);
    n += k;
  }
  if (*p) cut = 1;
  if (cap) out[n] = 0;
  if (cut || cap == 0) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* Whether output pattern `pat` (or `default_name` inside the folder it names, as rt_expand_output) has a %p. */
static int pattern_has_pid(const char* pat, const char* default_name) {
  struct stat sb;
  size_t plen = strlen(pat);
  if (plen > 0 && (pat[plen - 1] == '/' || (stat(pat, &sb) == 0 && S_ISDIR(sb.st_mode)))) pat = default_name;
  for (const char* p = pat; *p; p++)
    if (*p == '%' && p[1]) {
      if (p[1] == 'p') return 1;
      p++; /* %% and the other escapes */
    }
  return 0;
}

/* Says that the dump went to `chosen` because `wanted` was taken. */
/* Whether a descriptor of this process has the file at `path` open (device and inode): another rawtrace collector
 * loaded into this process (two preloaded, each with its own writer) writes it. A dump from before an exec is not:
 * its descriptor was close-on-exec. */
static int open_in_this_process(const char* path) {
  struct stat want;
  if (stat(path, &want) != 0) return 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  int found = 0;
  for (struct dirent* e = readdir(d); e && !found; e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char fd_path[64];
    snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%.20s", e->d_name);
    struct stat st;
    found = stat(fd_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
  }
  closedir(d);
  return found;
}

static void say_renamed(int verbosity, const char* pat, const char* default_name, const char* wanted, const char* chosen) {
  /* Another collector of this process writing it (two vendors' collectors preloaded, one output name). Else, with %p
   * in the name only this pid wrote it: this process before an exec (the collector is loaded again into the new
   * program), or an earlier process that had the same pid. Without %p: another process, or an earlier run. */
  const char* why = open_in_this_process(wanted)
                        ? "another rawtrace collector loaded into this process writes it: one dump per collector"
                    : pattern_has_pid(pat, default_name)
                        ? "this process wrote it before it exec'd a new program, or an earlier process had this pid"
                        : "another process, or an earlier run, uses this RAWTRACE_OUTPUT; add %p for one file per process";
  char msg[560];
  snprintf(msg, sizeof msg, "%.200s already exists (%s); writing %.200s instead", wanted, why, chosen);
  rt_log_line(verbosity, RT_V_WARN, msg);
}

/* An empty file named as the dump in folder RAWTRACE_DUMP_MARKS, when set. Creating a file is atomic on every file
 * system (NFS included, where appending lines to one shared list is not), so processes of one run on several hosts
 * can all mark into one folder. */
static void mark_dump(const char* chosen) {
  const char* marks = getenv("RAWTRACE_DUMP_MARKS");
  if (!marks || !*marks) return;
  const char* base = strrchr(chosen, '/');
  base = base ? base + 1 : chosen;
  char path[PATH_MAX];
  int k = snprintf(path, sizeof path, "%s/%s", marks, base);
  if (k < 0 || (size_t)k >= sizeof path) return;
  int fd;
  do fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd >= 0) close(fd);
}

void rt_dump_created(int verbosity, const char* pat, const char* default_name, const char* wanted, const char* chosen) {
  if (strcmp(wanted, chosen) != 0) say_renamed(verbosity, pat, default_name, wanted, chosen);
  mark_dump(chosen);
}

uint32_t rt_read_cmdline(char* buf, size_t cap) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  while (n < cap) {
    ssize_t k = read(fd, buf + n, cap - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
  }
  close(fd);
  return (uint32_t)n;
}

/* The part of `path` after its last '/'. */
static const char* base_of(const char* path) {
  const char* b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* The script or module a command line runs (`args`: its `n` arguments after argv[0]), or NULL. For a CPython
 * interpreter (`python`) its options are read as CPython reads them: a cluster of one-letter flags (`-uB`), `-W` and
 * `-X` with their value attached or next (`-W ignore train.py`), `-m` with the module attached or next (`-mtrain`,
 * `-um train`), `-c` (a command: no script), `--check-hash-based-pycs` with its value, `--` before the script. For
 * any other program: the first argument that is not an option, or the one after `-m`. */
static const char* script_of(int python, char* const* args, int n) {
  for (int i = 0; i < n; i++) {
    const char* a = args[i];
    if (!python) {
      if (!strcmp(a, "-m")) return i + 1 < n ? args[i + 1] : NULL;
      if (a[0] != '-') return base_of(a);
      continue;
    }
    if (!strcmp(a, "--")) return i + 1 < n ? base_of(args[i + 1]) : NULL;
    if (a[0] != '-' || a[1] == 0) return a[0] == '-' ? NULL : base_of(a); /* `-`: the script on standard input */
    if (a[1] == '-') {
      if (!strcmp(a, "--check-hash-based-pycs")) i++;
      continue;
    }
    for (const char* c = a + 1; *c; c++) {
      if (*c == 'm') return c[1] ? c + 1 : i + 1 < n ? args[i + 1] : NULL;
      if (*c == 'c') return NULL;
      if (*c == 'W' || *c == 'X') {
        if (!c[1]) i++; /* the value is the next argument */
        break;
      }
    }
  }
  return NULL;
}

int rt_process_selected(void) {
  const char* want = getenv("RAWTRACE_PROCESS");
  if (!want || !*want) return 1;
  /* The names a user would give: the executable's, argv[0]'s, and the script or module the program runs
   * (`python -u train.py`, `python -W ignore train.py`, `python -m torch.distributed.run`: script_of). */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char cmd[4096];
  uint32_t len = rt_read_cmdline(cmd, sizeof cmd - 1);
  cmd[len] = 0;
  const char* names[3] = {exe[0] ? base_of(exe) : program_invocation_short_name, NULL, NULL};
  if (len > 0) {
    names[1] = base_of(cmd);
    char* args[64];
    int argc = 0;
    for (uint32_t at = (uint32_t)strlen(cmd) + 1; at < len && argc < 64; at += (uint32_t)strlen(cmd + at) + 1)
      args[argc++] = cmd + at;
    int python = !strncmp(names[0], "python", 6) || !strncmp(names[1], "python", 6);
    names[2] = script_of(python, args, argc);
  }
  char list[1024];
  snprintf(list, sizeof list, "%s", want);
  char* save = NULL;
  int patterns = 0;
  for (char* pat = strtok_r(list, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
    while (*pat == ' ' || *pat == '\t') pat++;
    char* e = pat + strlen(pat);
    while (e > pat && (e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
    if (*pat) patterns++;
    for (int k = 0; k < 3; k++)
      if (*pat && names[k] && *names[k] && fnmatch(pat, names[k], 0) == 0) return 1;
  }
  return patterns == 0; /* a list of blanks names nothing: as unset, every process */
}

void rt_header_process(rt_header_info* h, uint64_t start_ns, char* host, char* cmdline, size_t cmdline_cap) {
  h->pid = (uint32_t)getpid();
  h->rank = rt_env_int("RANK", -1);
  h->local_rank = rt_env_int("LOCAL_RANK", -1);
  h->world_size = rt_env_int("WORLD_SIZE", -1);
  h->start_ns = start_ns;
  if (gethostname(host, 256) != 0) host[0] = 0;
  host[255] = 0;
  h->hostname = host;
  h->cmdline_len = rt_read_cmdline(cmdline, cmdline_cap);
  h->cmdline = cmdline;
}

uint64_t rt_clock_ns(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec rt_deadline_ms(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}
