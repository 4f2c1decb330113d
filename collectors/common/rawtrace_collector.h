/**
 * Helpers every rawtrace collector needs besides the container writer: RAWTRACE_* environment parsing, the output
 * path pattern, the process facts of the HEADER chunk, and clocks. C11 + POSIX; no vendor header.
 *
 * Thread safety: every function may be called from any thread; none may be called from a signal handler.
 * Units: times in nanoseconds, sizes in bytes.
 */
#ifndef RAWTRACE_COLLECTOR_H
#define RAWTRACE_COLLECTOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rawtrace_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels of RAWTRACE_LOG, most severe first. */
enum rt_log_verbosity { RT_V_OFF = 0, RT_V_ERROR = 1, RT_V_WARN = 2, RT_V_INFO = 3, RT_V_DEBUG = 4 };

/** RAWTRACE_LOG text ("off", "error", "warn", "info", "debug" or 0..4) → RT_V_*; RT_V_WARN when unset or unknown. */
int rt_parse_log_level(const char* s);

/**
 * Writes "rawtrace[<pid>]: <level>: <msg>\n" to stderr with one write(2) when `level` <= `verbosity`. `msg` is cut
 * to fit one line of 560 bytes.
 */
void rt_log_line(int verbosity, int level, const char* msg);

/** RT_V_ERROR / RT_V_WARN / other → the LOG chunk level RT_LOG_ERROR / RT_LOG_WARNING / RT_LOG_INFO. */
uint32_t rt_log_chunk_level(int level);

/**
 * A collector's check of a writer result `rc`: the first write error (any failure but -EMSGSIZE and -ENOMEM, which
 * refuse one chunk and leave the writer usable) sets `*failed` and says once on stderr (at `verbosity`) that writing
 * `path` failed and recording stops; a refused chunk is said as a warning (what it held is missing from the file;
 * the CUDA and ROCm collectors say the same in their own checks). Returns `rc`.
 */
int rt_check_write(int rc, atomic_int* failed, const char* path, int verbosity);

/**
 * A size in bytes from environment variable `var`: "65536", "512k", "8M", "8MiB", "1G" (binary multiples).
 * Returns `def` when unset; `def` with a warning line (at `verbosity`) when malformed.
 */
size_t rt_env_size(const char* var, size_t def, int verbosity);

/**
 * Seconds from `var` ("2.5" or "2.5s"), 0 to 1e6; 0 when unset, 0 with a warning line (at `verbosity`) when
 * malformed, negative, infinite or larger.
 */
double rt_env_seconds(const char* var, int verbosity);

/**
 * A timeout in seconds from `var`, above 0 and at most 1e6: `def` when unset, `def` with a warning line (at
 * `verbosity`) when 0, negative, malformed or larger (a zero timeout would give the exit flush no time at all).
 */
double rt_env_timeout(const char* var, double def, int verbosity);

/** Boolean from `var`: "0", "no", "off", "false" → 0; any other non-empty value → 1; unset or empty → `def`. */
int rt_env_flag(const char* var, int def);

/** Integer from `var`, or `def` when unset or not an int. */
int rt_env_int(const char* var, int def);

/**
 * Whether this process is one RAWTRACE_PROCESS asks for: unset or empty = every process; else a comma list of names
 * or shell patterns (`python*`, `train.py`) matched against the executable's base name, argv[0]'s, and the script
 * the program runs (the first argument that is not an option) or the module after `-m`. Under LD_PRELOAD every child of the program (shells, `nvidia-smi`, `ls`) loads the collector
 * too; this keeps them out. The collectors check it where loading would start collection by itself.
 */
int rt_process_selected(void);

/**
 * rt_env_int for a user's setting: a value that is not a whole number from `min` up gets a warning line (at
 * `verbosity`) and `def`.
 */
int rt_env_int_warn(const char* var, int def, int min, int verbosity);

/**
 * The payload checksum of writer `w` from RAWTRACE_CHECKSUM: unset, empty or `xxh64` keeps the writer's default
 * (XXH64's low 32 bits, format 1.2); `xxh32` writes XXH32, which readers of format 1.1 verify too, `crc32` CRC-32,
 * which readers of format 1.0 verify too (older readers read the newer checksums' payloads unverified;
 * docs/format.md). Another value gets a warning line (at `verbosity`) and is ignored.
 */
void rt_env_checksum(rt_writer* w, int verbosity);

/**
 * Expands the output pattern `pat` into `out` (`cap` bytes): %p pid, %h host name, %r rank (RANK, else LOCAL_RANK,
 * else 0), %t start time as UTC YYYYmmdd-HHMMSS (from `start_ns`, CLOCK_REALTIME), %% a percent sign. A pattern
 * naming a directory (existing, or ending in '/') gets `default_name` (itself a pattern) inside it. Returns 0, or -1
 * with errno ENAMETOOLONG when the expansion does not fit `cap` (`out` then holds a cut name that must not be used:
 * it would lose the pid or the extension without a word).
 */
int rt_expand_output(const char* pat, const char* default_name, char* out, size_t cap, uint64_t start_ns);

/**
 * What every collector does once its dump `chosen` exists. When `wanted` (the expansion of output pattern `pat`,
 * `default_name` inside a folder) was taken and `chosen` is a numbered name instead, a warning line (at `verbosity`)
 * says so and why the name can be taken: with %p in the pattern only an exec or a reused pid, without it another
 * process or run. When RAWTRACE_DUMP_MARKS names a folder (`rawtrace record` sets it), an empty file named as the
 * dump is made there: the run's own list of dumps, told apart from another run's writing into the same folder.
 */
void rt_dump_created(int verbosity, const char* pat, const char* default_name, const char* wanted, const char* chosen);

/** Reads /proc/self/cmdline (arguments separated by NUL) into `buf`; returns the bytes read (0 when unreadable). */
uint32_t rt_read_cmdline(char* buf, size_t cap);

/**
 * Fills the process fields of a HEADER: pid, RANK / LOCAL_RANK / WORLD_SIZE, start time, host name and command line.
 * `host` (at least 256 bytes) and `cmdline` (`cmdline_cap` bytes) are the caller's storage that `h` then points to.
 */
void rt_header_process(rt_header_info* h, uint64_t start_ns, char* host, char* cmdline, size_t cmdline_cap);

/** Nanoseconds of clock `id` (0 when it cannot be read). */
uint64_t rt_clock_ns(clockid_t id);

/** Absolute CLOCK_REALTIME time `ms` milliseconds from now, for the pthread/semaphore *timedwait functions. */
struct timespec rt_deadline_ms(long ms);

#ifdef __cplusplus
}
#endif

#endif /* RAWTRACE_COLLECTOR_H */
