/*
 * rawtrace CUDA collector: the exit flush (atexit), SIGTERM/SIGINT/SIGHUP and the RAWTRACE_SIGNAL toggle
 * (async-signal-safe handlers), and the forked child.
 */
#include "cuda_internal.h"

/* ------------------------------------------------------------------------------------------------------------------ */
/* Exit, signals, fork                                                                                                */
/* ------------------------------------------------------------------------------------------------------------------ */

static struct sigaction g_old_sig[RT_TERM_SIGNALS]; /* SIGTERM, SIGINT, SIGHUP */

/* From a normal thread: asks the writer for the exit flush and waits for it (bounded). */
static void finalize_and_wait(void) {
  if (!G.writer_started || getpid() != G.owner_pid) return;
  if (rt_queue_shutdown(&G.q, &G.finalize_req, &G.joined, G.writer, (long)(G.cfg.exit_timeout * 1000)) == 0)
    rt_cuda_logmsg(LOG_WARN, "exit flush did not finish within %.1f s; the file may lack its last chunks",
                   G.cfg.exit_timeout);
}

void rt_cuda_at_exit(void) { finalize_and_wait(); }

/* Registered again from the first bufferRequested, i.e. after the CUDA runtime registered its own exit handler:
 * handlers run in reverse order, so the flush then happens while CUDA is still up. The handler runs once. */
void rt_cuda_register_atexit_again(void) {
  int expected = 0;
  if (atomic_compare_exchange_strong(&G.atexit_again, &expected, 1)) atexit(rt_cuda_at_exit);
}

static void on_term_signal(int sig, siginfo_t* si, void* uc) {
  int saved = errno;
  const struct sigaction* old = &g_old_sig[rt_term_index(sig)];
  int ours = G.writer_started && getpid() == G.owner_pid;
  int dfl = rt_sig_is_default(old);
  if (ours && dfl) {
    /* The process is about to die: full exit flush. A second signal (on another thread, or another of the three:
     * Ctrl-C reaching the program and `rawtrace record` forwarding it) waits for the same flush instead of ending
     * the process in the middle of it. */
    rt_queue_note_signal(&G.q);
    if (!atomic_exchange(&G.finalize_req, 1)) {
      rt_queue_drain_pipe(&G.q);
      rt_queue_wake(&G.q);
    }
    /* Until the writer finished, not until any byte: a flush for a signal the program handled (Ctrl-C in Python)
     * may end meanwhile, or have left its byte when it outlasted its wait. */
    rt_queue_wait_pipe_finished(&G.q, (int)(G.cfg.exit_timeout * 1000));
  } else if (ours && !atomic_load(&G.finalize_req)) {
    /* The program handles it: write what we have, keep going. */
    rt_queue_drain_pipe(&G.q);
    atomic_store(&G.sig_flush_req, 1);
    rt_queue_wake(&G.q);
    rt_queue_wait_pipe(&G.q, SIGNAL_WAIT_MS);
  }
  rt_chain_signal(sig, si, uc, old);
  errno = saved;
}

static struct sigaction g_old_toggle; /* the program's own handler of RAWTRACE_SIGNAL, called after ours */

static void on_toggle_signal(int sig, siginfo_t* si, void* uc) {
  int saved = errno;
  if (G.writer_started && getpid() == G.owner_pid) {
    atomic_fetch_add(&G.toggle_req, 1);
    rt_queue_wake(&G.q);
  }
  /* A handler the program had (Slurm's --signal=USR1 pre-emption, a requeue hook) still runs; its default action
   * (ending the process, for USR1) does not: that signal is the toggle now. */
  const struct sigaction* old = &g_old_toggle;
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  }
  errno = saved;
}

void rt_cuda_install_signal_handlers(void) {
  struct sigaction sa;
  if (G.cfg.handle_signals) rt_install_term_handlers(on_term_signal, g_old_sig);
  if (G.cfg.signal_no) {
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_toggle_signal;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(G.cfg.signal_no, &sa, &g_old_toggle) != 0)
      rt_cuda_logrec(LOG_WARN, "cannot install the RAWTRACE_SIGNAL handler for signal %d: %s", G.cfg.signal_no,
                     strerror(errno));
    /* RAWTRACE_SIGNAL=HUP: the toggle replaces the finishing handler just installed for SIGHUP; what it chains to is
     * the program's own disposition, saved by that handler (chaining to ours would end the program at the first
     * toggle). */
    else if (g_old_toggle.sa_flags & SA_SIGINFO && g_old_toggle.sa_sigaction == on_term_signal)
      g_old_toggle = g_old_sig[rt_term_index(G.cfg.signal_no)];
  }
}

/* In a forked child the writer thread does not exist and the file belongs to the parent: stay out of the way, and
 * let go of the parent's descriptor (a FIFO's reader must see its end when the parent closes it). */
void rt_cuda_on_fork_child(void) {
  atomic_store(&G.sink_closed, 1);
  rt_writer_forget_fd(G.w);
}
