/*
 * rawtrace ROCm collector: the exit flush (atexit and the SDK's finalize), SIGTERM/SIGINT/SIGHUP, and the forked
 * child.
 */
#include "rocm_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Exit, signals, fork                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct sigaction g_old_sig[RT_TERM_SIGNALS]; /* SIGTERM, SIGINT, SIGHUP */

/* From a normal thread: asks the writer for the exit flush and waits for it (bounded). Idempotent. */
void rt_rocm_finish(void) {
  if (!atomic_load(&G.writer_started) || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.writer, (long)(G.cfg.exit_timeout * 1000)) == 0)
    rt_rocm_logmsg(RT_V_WARN, "exit flush did not finish within %.1f s; the file may lack its last chunks",
                   G.cfg.exit_timeout);
}

void rt_rocm_at_exit(void) { rt_rocm_finish(); }

/* When the process is about to die (default disposition), runs the exit flush and waits for it on the pipe. */
static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int armed = atomic_load(&G.writer_started) && getpid() == G.owner_pid;
  rt_queue_on_term_signal(&G.q, &G.finalize_req, armed, (int)(G.cfg.exit_timeout * 1000), sig, si, uc,
                          &g_old_sig[rt_term_index(sig)]);
}

void rt_rocm_install_signal_handlers(void) {
  if (G.cfg.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
}

/* In a forked child the writer thread does not exist and the file belongs to the parent. */
void rt_rocm_on_fork_child(void) {
  atomic_store(&G.sink_closed, 1);
  rt_writer_forget_fd(G.w); /* the parent's descriptor: a FIFO's reader must see its end when the parent closes it */
}
