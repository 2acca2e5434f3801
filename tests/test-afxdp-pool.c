/*
 * Copyright (c) 2026 The ovs-afxdp authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afxdp-pool.h"
#include "command-line.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "ovstest.h"
#include "random.h"
#include "timeval.h"
#include "util.h"

/* Checks that the pool's free frames (shared list and caches, once flushed)
 * are exactly the frames [0, n_frames), each once. */
static void
check_all_free(struct afxdp_pool *pool)
{
    uint32_t n_frames = afxdp_pool_n_frames(pool);
    uint32_t *frames = xmalloc((n_frames + 1) * sizeof *frames);
    bool *seen = xcalloc(MAX(n_frames, 1), sizeof *seen);
    struct afxdp_pool_stats stats;
    size_t n;

    for (uint32_t u = 0; u < afxdp_pool_n_caches(pool); u++) {
        afxdp_pool_flush(pool, u);
    }
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_shared == n_frames);
    ovs_assert(stats.n_cached == 0);
    ovs_assert(stats.n_out == 0);

    n = afxdp_pool_pop_bulk(pool, frames, n_frames + 1);
    if (n != n_frames) {
        ovs_fatal(0, "pool holds %"PRIuSIZE" frames, expected %"PRIu32,
                  n, n_frames);
    }
    for (size_t i = 0; i < n; i++) {
        if (frames[i] >= n_frames || seen[frames[i]]) {
            ovs_fatal(0, "frame %"PRIu32" is %s", frames[i],
                      frames[i] >= n_frames ? "out of range" : "duplicated");
        }
        seen[frames[i]] = true;
    }
    afxdp_pool_push_bulk(pool, frames, n);

    free(seen);
    free(frames);
}

static void
test_empty_full(void)
{
    enum { N = 1000 };
    struct afxdp_pool *pool = afxdp_pool_create(N, 0);
    struct afxdp_pool_stats stats;
    uint32_t frame;

    /* A new pool hands out its frames in ascending order. */
    for (uint32_t i = 0; i < N; i++) {
        ovs_assert(afxdp_pool_pop(pool, &frame));
        ovs_assert(frame == i);
    }
    ovs_assert(!afxdp_pool_pop(pool, &frame));
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_frames == N && stats.n_shared == 0 && stats.n_out == N);

    /* Last in, first out. */
    for (uint32_t i = 0; i < N; i++) {
        afxdp_pool_push(pool, i);
    }
    for (uint32_t i = N; i-- > 0;) {
        ovs_assert(afxdp_pool_pop(pool, &frame));
        ovs_assert(frame == i);
    }
    ovs_assert(!afxdp_pool_pop(pool, &frame));
    for (uint32_t i = 0; i < N; i++) {
        afxdp_pool_push(pool, i);
    }
    check_all_free(pool);
    afxdp_pool_destroy(pool);

    /* A pool without frames. */
    pool = afxdp_pool_create(0, 1);
    ovs_assert(!afxdp_pool_pop(pool, &frame));
    ovs_assert(afxdp_pool_get(pool, 0, &frame, 1) == 0);
    check_all_free(pool);
    afxdp_pool_destroy(pool);
}

static void
test_bulk(void)
{
    enum { N = 300 };
    struct afxdp_pool *pool = afxdp_pool_create(N, 0);
    uint32_t frames[N + 10], more[4];

    ovs_assert(afxdp_pool_pop_bulk(pool, frames, 0) == 0);
    afxdp_pool_push_bulk(pool, frames, 0);

    /* Asking for more than there is returns what there is. */
    ovs_assert(afxdp_pool_pop_bulk(pool, frames, N + 10) == N);
    ovs_assert(afxdp_pool_pop_bulk(pool, more, 4) == 0);
    for (uint32_t i = 0; i < N; i++) {
        ovs_assert(frames[i] == i);
    }

    /* A bulk push is popped back in array order, above older frames. */
    afxdp_pool_push_bulk(pool, &frames[100], 50);
    afxdp_pool_push_bulk(pool, (uint32_t []) { 7, 3, 5 }, 3);
    ovs_assert(afxdp_pool_pop_bulk(pool, more, 4) == 4);
    ovs_assert(more[0] == 7 && more[1] == 3 && more[2] == 5 && more[3] == 100);
    ovs_assert(afxdp_pool_pop_bulk(pool, more, 1) == 1 && more[0] == 101);

    /* Out: frames 0 to 101 and 150 to 299.  Give them back and take
     * exactly all of it. */
    afxdp_pool_push_bulk(pool, frames, 102);
    afxdp_pool_push_bulk(pool, &frames[150], N - 150);
    ovs_assert(afxdp_pool_pop_bulk(pool, &frames[N], 1) == 1);
    afxdp_pool_push(pool, frames[N]);
    check_all_free(pool);
    afxdp_pool_destroy(pool);
}

static void
test_cache(void)
{
    enum { N = 2 * AFXDP_POOL_CACHE_SIZE + 100 };
    struct afxdp_pool *pool = afxdp_pool_create(N, 2);
    uint32_t frames[N], frame;
    struct afxdp_pool_stats stats;
    size_t n;

    /* A get through an empty cache refills it with a bulk to spare. */
    ovs_assert(afxdp_pool_get(pool, 0, &frame, 1) == 1);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_cached == AFXDP_POOL_BULK);
    ovs_assert(stats.n_shared == N - 1 - AFXDP_POOL_BULK);
    ovs_assert(stats.n_out == 1);

    /* A frame put through another user's cache stays there. */
    afxdp_pool_put(pool, 1, &frame, 1);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_cached == AFXDP_POOL_BULK + 1 && stats.n_out == 0);
    ovs_assert(afxdp_pool_get(pool, 1, &frame, 1) == 1);
    afxdp_pool_put(pool, 1, &frame, 1);

    /* Filling a cache beyond its size flushes it to half. */
    n = afxdp_pool_pop_bulk(pool, frames, AFXDP_POOL_CACHE_SIZE);
    ovs_assert(n == AFXDP_POOL_CACHE_SIZE);
    for (size_t i = 0; i < n; i += 16) {
        afxdp_pool_put(pool, 0, &frames[i], 16);
    }
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_out == 0);
    ovs_assert(stats.n_cached <= AFXDP_POOL_CACHE_SIZE + 1);

    /* Requests larger than a cache, and a pool running dry. */
    n = afxdp_pool_get(pool, 0, frames, N);
    ovs_assert(n == N - 1);         /* One frame sits in user 1's cache. */
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_out == N - 1 && stats.n_shared == 0);
    ovs_assert(afxdp_pool_get(pool, 0, &frame, 1) == 0);
    afxdp_pool_put(pool, 0, frames, n);

    /* Users without a cache use the shared list. */
    ovs_assert(afxdp_pool_get(pool, AFXDP_POOL_NO_CACHE, &frame, 1) == 1);
    afxdp_pool_put(pool, 7, &frame, 1);
    afxdp_pool_flush(pool, AFXDP_POOL_NO_CACHE);

    check_all_free(pool);
    afxdp_pool_destroy(pool);
}

/* A user's cache does not starve another user: a get that finds the pool
 * dry makes every other user's next get, put or poll give its cache back. */
static void
test_starvation(void)
{
    enum { N = 2 * AFXDP_POOL_CACHE_SIZE };
    struct afxdp_pool *pool = afxdp_pool_create(N, 3);
    uint32_t frames[N], frame;
    struct afxdp_pool_stats stats;
    uint32_t held, requests;
    size_t n;

    /* User 0 takes every frame and gives them back: its cache keeps some,
     * out of user 1's reach. */
    ovs_assert(afxdp_pool_get(pool, 0, frames, N) == N);
    for (size_t i = 0; i < N; i += 16) {
        afxdp_pool_put(pool, 0, &frames[i], 16);
    }
    afxdp_pool_get_stats(pool, &stats);
    held = stats.n_cached;
    ovs_assert(held > 0 && stats.n_shared == N - held);
    ovs_assert(stats.n_flush_requests == 0);

    /* User 1 wants them all and comes up short: a flush request. */
    n = afxdp_pool_get(pool, 1, frames, N);
    ovs_assert(n == N - held);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_flush_requests == 1);
    ovs_assert(afxdp_pool_get(pool, 1, &frame, 1) == 0);   /* Another. */

    /* User 2, with an empty cache, and user 1 itself, which raised it,
     * have nothing to give. */
    afxdp_pool_poll(pool, 2);
    afxdp_pool_poll(pool, 1);
    ovs_assert(afxdp_pool_get(pool, 1, &frame, 1) == 0);

    /* User 0, idle, answers through a poll: its cache empties once. */
    afxdp_pool_poll(pool, 0);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_cached == 0 && stats.n_shared == held);
    ovs_assert(afxdp_pool_get(pool, 1, &frames[n], held) == held);
    n += held;

    /* A put answers too, the frames put included: user 1 gives back a few
     * through its cache, user 0 runs the pool dry, user 1 puts one more. */
    afxdp_pool_put(pool, 1, frames, 8);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_cached == 8 && stats.n_shared == 0);
    requests = stats.n_flush_requests;
    ovs_assert(afxdp_pool_get(pool, 0, &frame, 1) == 0);
    afxdp_pool_put(pool, 1, &frames[8], 1);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_flush_requests == requests + 1);
    ovs_assert(stats.n_cached == 0 && stats.n_shared == 9);

    /* Answered once: the next put stays in the cache. */
    afxdp_pool_put(pool, 1, &frames[9], 1);
    afxdp_pool_get_stats(pool, &stats);
    ovs_assert(stats.n_cached == 1);

    afxdp_pool_put(pool, 1, &frames[10], n - 10);
    check_all_free(pool);
    afxdp_pool_destroy(pool);
}

/* Multi-threaded stress.
 *
 * Every thread takes and gives back frames in random bulks, through its own
 * cache or (the last thread) none, and hands frames to other threads through
 * a few mailboxes, so that frames are often freed by a thread other than the
 * one that took them.  'owner' records who holds each frame, updated with
 * compare-and-swap: taking a frame that someone holds, or giving back a
 * frame one does not hold, is an error.  'payload' stands for the frame's
 * packet data: written plainly by each holder, so that a build with
 * ThreadSanitizer reports a race if the pool hands a frame over without a
 * happens-before edge from the last holder's writes. */

#define OWNER_FREE 0
#define OWNER_MAIL UINT32_MAX
#define N_MAILBOXES 8
#define MAX_HELD 512

struct stress_aux {
    struct afxdp_pool *pool;
    atomic_uint32_t *owner;
    uint32_t *payload;
    atomic_uint32_t mailbox[N_MAILBOXES];
    atomic_count errors;
    struct ovs_barrier barrier;
    unsigned int n_iterations;
};

struct stress_thread {
    struct stress_aux *aux;
    uint32_t id;                /* Index, also its pool user. */
    pthread_t thread;
    uint64_t n_taken;
    uint64_t n_mailed;
};

static void
stress_error(struct stress_aux *aux, const char *what, uint32_t frame,
             uint32_t expected, uint32_t actual)
{
    if (atomic_count_inc(&aux->errors) < 10) {
        fprintf(stderr, "frame %"PRIu32": %s (expected owner %"PRIu32
                ", found %"PRIu32")\n", frame, what, expected, actual);
    }
}

static void
stress_claim(struct stress_aux *aux, uint32_t frame, uint32_t from,
             uint32_t to)
{
    uint32_t expected = from;

    /* Relaxed: the happens-before edges between holders must come from the
     * pool (or a mailbox), not from this bookkeeping. */
    if (!atomic_compare_exchange_strong_explicit(&aux->owner[frame],
                                                 &expected, to,
                                                 memory_order_relaxed,
                                                 memory_order_relaxed)) {
        stress_error(aux, "held twice or lost", frame, from, expected);
    }
}

/* Marks 'frame' as held by 'me' and writes its payload. */
static void
stress_take(struct stress_aux *aux, uint32_t frame, uint32_t from,
            uint32_t me)
{
    stress_claim(aux, frame, from, me);
    aux->payload[frame] = me;
}

/* Gives back the last 'n' of the 'n_held' frames in 'held' and returns how
 * many are still held. */
static size_t
stress_put(struct stress_thread *t, uint32_t *held, size_t n_held, size_t n)
{
    struct stress_aux *aux = t->aux;
    size_t first = n_held - n;
    uint32_t me = t->id + 1;

    /* Released before the frames are given back: once in the pool, another
     * thread may take them at once. */
    for (size_t i = first; i < n_held; i++) {
        if (aux->payload[held[i]] != me) {
            stress_error(aux, "payload overwritten", held[i], me,
                         aux->payload[held[i]]);
        }
        stress_claim(aux, held[i], me, OWNER_FREE);
    }
    afxdp_pool_put(aux->pool, t->id, &held[first], n);
    return first;
}

static void *
stress_thread_main(void *t_)
{
    struct stress_thread *t = t_;
    struct stress_aux *aux = t->aux;
    uint32_t held[MAX_HELD];
    uint32_t me = t->id + 1;
    size_t n_held = 0;

    ovs_barrier_block(&aux->barrier);

    for (unsigned int i = 0; i < aux->n_iterations; i++) {
        uint32_t r = random_uint32();

        if (r % 8 == 0 && n_held) {
            /* Swap a held frame for whatever a mailbox holds. */
            atomic_uint32_t *box = &aux->mailbox[(r >> 8) % N_MAILBOXES];
            uint32_t frame = held[--n_held];
            uint32_t old;

            stress_claim(aux, frame, me, OWNER_MAIL);
            old = atomic_exchange(box, frame);
            if (old != UINT32_MAX) {
                stress_take(aux, old, OWNER_MAIL, me);
                held[n_held++] = old;
                t->n_mailed++;
            }
        } else if (r % 2 && n_held < MAX_HELD) {
            size_t want = 1 + (r >> 8) % MIN(2 * AFXDP_POOL_BULK,
                                             MAX_HELD - n_held);
            size_t got = afxdp_pool_get(aux->pool, t->id, &held[n_held],
                                        want);

            for (size_t j = n_held; j < n_held + got; j++) {
                stress_take(aux, held[j], OWNER_FREE, me);
            }
            n_held += got;
            t->n_taken += got;
        } else if (n_held) {
            n_held = stress_put(t, held, n_held, 1 + (r >> 8) % n_held);
        }
    }
    n_held = stress_put(t, held, n_held, n_held);
    ovs_assert(!n_held);

    return NULL;
}

static void
test_stress(uint32_t n_frames, unsigned int n_threads,
            unsigned int n_iterations)
{
    struct stress_thread *threads = xcalloc(n_threads, sizeof *threads);
    struct stress_aux aux;
    uint64_t taken = 0, mailed = 0;

    /* The last thread goes without a cache. */
    aux.pool = afxdp_pool_create(n_frames, n_threads - 1);
    aux.owner = xmalloc(n_frames * sizeof *aux.owner);
    aux.payload = xcalloc(n_frames, sizeof *aux.payload);
    for (uint32_t i = 0; i < n_frames; i++) {
        atomic_init(&aux.owner[i], OWNER_FREE);
    }
    for (int i = 0; i < N_MAILBOXES; i++) {
        atomic_init(&aux.mailbox[i], UINT32_MAX);
    }
    atomic_count_init(&aux.errors, 0);
    ovs_barrier_init(&aux.barrier, n_threads);
    aux.n_iterations = n_iterations;

    for (unsigned int i = 0; i < n_threads; i++) {
        threads[i].aux = &aux;
        threads[i].id = i;
        threads[i].thread = ovs_thread_create("afxdp-pool-stress",
                                              stress_thread_main,
                                              &threads[i]);
    }
    for (unsigned int i = 0; i < n_threads; i++) {
        xpthread_join(threads[i].thread, NULL);
        taken += threads[i].n_taken;
        mailed += threads[i].n_mailed;
    }

    /* Frames left in the mailboxes go back too. */
    for (int i = 0; i < N_MAILBOXES; i++) {
        uint32_t frame;

        atomic_read_relaxed(&aux.mailbox[i], &frame);
        if (frame != UINT32_MAX) {
            stress_claim(&aux, frame, OWNER_MAIL, OWNER_FREE);
            afxdp_pool_push(aux.pool, frame);
        }
    }
    for (uint32_t i = 0; i < n_frames; i++) {
        uint32_t owner;

        atomic_read_relaxed(&aux.owner[i], &owner);
        if (owner != OWNER_FREE) {
            stress_error(&aux, "not given back", i, OWNER_FREE, owner);
        }
    }

    if (atomic_count_get(&aux.errors)) {
        ovs_fatal(0, "stress: %u ownership errors",
                  atomic_count_get(&aux.errors));
    }
    /* A run that moved no frame between threads would prove nothing. */
    if (!taken || !mailed) {
        ovs_fatal(0, "stress: %"PRIu64" frames taken, %"PRIu64" passed "
                  "between threads", taken, mailed);
    }
    check_all_free(aux.pool);

    ovs_barrier_destroy(&aux.barrier);
    free(aux.payload);
    free(aux.owner);
    afxdp_pool_destroy(aux.pool);
    free(threads);
}

static void
run_check(struct ovs_cmdl_context *ctx)
{
    unsigned int n_threads = ctx->argc > 1 ? atoi(ctx->argv[1]) : 4;
    unsigned int n_iterations = ctx->argc > 2 ? atoi(ctx->argv[2]) : 200000;

    if (n_threads < 2 || !n_iterations) {
        ovs_fatal(0, "check: at least 2 threads and 1 iteration");
    }

    test_empty_full();
    test_bulk();
    test_cache();
    test_starvation();
    /* A pool smaller than what the threads and caches can hold, so that it
     * runs dry, and one large enough that it never does. */
    test_stress(1024, n_threads, n_iterations);
    test_stress(64 * 1024, n_threads, n_iterations);
}

/* Benchmark: frames per second through get/put of bursts of 32, for the
 * pool with caches, the pool's shared list alone, and a stack of frame
 * indices behind a mutex or a spinlock (the design the pool replaces). */

#define BENCH_BURST 32

enum bench_kind {
    BENCH_POOL_CACHED,
    BENCH_POOL_SHARED,
    BENCH_MUTEX,
    BENCH_SPINLOCK,
};

static const char *const bench_names[] = {
    [BENCH_POOL_CACHED] = "afxdp-pool, per-thread caches",
    [BENCH_POOL_SHARED] = "afxdp-pool, shared list only",
    [BENCH_MUTEX] = "stack + mutex",
    [BENCH_SPINLOCK] = "stack + spinlock",
};

struct locked_stack {
    struct ovs_mutex mutex;
    struct ovs_spin spin;
    uint32_t *frames;
    size_t n;
};

struct bench_aux {
    enum bench_kind kind;
    struct afxdp_pool *pool;
    struct locked_stack stack;
    struct ovs_barrier barrier;
    unsigned int n_iterations;
};

struct bench_thread {
    struct bench_aux *aux;
    uint32_t id;
    pthread_t thread;
};

static size_t
locked_stack_pop(struct locked_stack *s, uint32_t frames[], size_t n)
{
    n = MIN(n, s->n);
    s->n -= n;
    memcpy(frames, &s->frames[s->n], n * sizeof frames[0]);
    return n;
}

static void
locked_stack_push(struct locked_stack *s, const uint32_t frames[], size_t n)
{
    memcpy(&s->frames[s->n], frames, n * sizeof frames[0]);
    s->n += n;
}

static void *
bench_thread_main(void *t_)
{
    struct bench_thread *t = t_;
    struct bench_aux *aux = t->aux;
    struct locked_stack *s = &aux->stack;
    uint32_t frames[BENCH_BURST];
    size_t n;

    ovs_barrier_block(&aux->barrier);
    for (unsigned int i = 0; i < aux->n_iterations; i++) {
        switch (aux->kind) {
        case BENCH_POOL_CACHED:
            n = afxdp_pool_get(aux->pool, t->id, frames, BENCH_BURST);
            afxdp_pool_put(aux->pool, t->id, frames, n);
            break;
        case BENCH_POOL_SHARED:
            n = afxdp_pool_pop_bulk(aux->pool, frames, BENCH_BURST);
            afxdp_pool_push_bulk(aux->pool, frames, n);
            break;
        case BENCH_MUTEX:
            ovs_mutex_lock(&s->mutex);
            n = locked_stack_pop(s, frames, BENCH_BURST);
            ovs_mutex_unlock(&s->mutex);
            ovs_mutex_lock(&s->mutex);
            locked_stack_push(s, frames, n);
            ovs_mutex_unlock(&s->mutex);
            break;
        case BENCH_SPINLOCK:
            ovs_spin_lock(&s->spin);
            n = locked_stack_pop(s, frames, BENCH_BURST);
            ovs_spin_unlock(&s->spin);
            ovs_spin_lock(&s->spin);
            locked_stack_push(s, frames, n);
            ovs_spin_unlock(&s->spin);
            break;
        default:
            OVS_NOT_REACHED();
        }
        ovs_assert(n == BENCH_BURST);
    }
    ovs_barrier_block(&aux->barrier);
    return NULL;
}

/* Returns million frames taken and given back per second. */
static double
bench_run(enum bench_kind kind, unsigned int n_threads,
          unsigned int n_iterations)
{
    enum { N_FRAMES = 4096 };
    struct bench_thread *threads = xcalloc(n_threads, sizeof *threads);
    struct bench_aux aux;
    long long int start, elapsed;

    aux.kind = kind;
    aux.pool = afxdp_pool_create(N_FRAMES, n_threads);
    ovs_mutex_init(&aux.stack.mutex);
    ovs_spin_init(&aux.stack.spin);
    aux.stack.frames = xmalloc(N_FRAMES * sizeof aux.stack.frames[0]);
    aux.stack.n = afxdp_pool_pop_bulk(aux.pool, aux.stack.frames, N_FRAMES);
    afxdp_pool_push_bulk(aux.pool, aux.stack.frames, aux.stack.n);
    ovs_barrier_init(&aux.barrier, n_threads + 1);
    aux.n_iterations = n_iterations;

    for (unsigned int i = 0; i < n_threads; i++) {
        threads[i].aux = &aux;
        threads[i].id = i;
        threads[i].thread = ovs_thread_create("afxdp-pool-bench",
                                              bench_thread_main, &threads[i]);
    }
    ovs_barrier_block(&aux.barrier);
    start = time_usec();
    ovs_barrier_block(&aux.barrier);
    elapsed = MAX(time_usec() - start, 1);
    for (unsigned int i = 0; i < n_threads; i++) {
        xpthread_join(threads[i].thread, NULL);
    }

    ovs_barrier_destroy(&aux.barrier);
    free(aux.stack.frames);
    ovs_spin_destroy(&aux.stack.spin);
    ovs_mutex_destroy(&aux.stack.mutex);
    afxdp_pool_destroy(aux.pool);
    free(threads);

    return (double) n_threads * n_iterations * BENCH_BURST / elapsed;
}

static void
run_benchmark(struct ovs_cmdl_context *ctx)
{
    unsigned int n_iterations = ctx->argc > 1 ? atoi(ctx->argv[1]) : 1000000;
    unsigned int max_threads = ctx->argc > 2 ? atoi(ctx->argv[2]) : 2;
    double spin[8] = { 0 };

    printf("%-32s %8s %14s %12s\n", "implementation", "threads",
           "Mframes/s", "vs spinlock");
    for (unsigned int n = 1; n <= max_threads && n < ARRAY_SIZE(spin); n++) {
        spin[n] = bench_run(BENCH_SPINLOCK, n, n_iterations);
        for (int kind = BENCH_POOL_CACHED; kind <= BENCH_SPINLOCK; kind++) {
            double rate = (kind == BENCH_SPINLOCK ? spin[n]
                           : bench_run(kind, n, n_iterations));

            printf("%-32s %8u %14.1f %11.2fx\n", bench_names[kind], n, rate,
                   rate / spin[n]);
        }
    }
}

static const struct ovs_cmdl_command commands[] = {
    {"check", "[threads [iterations]]", 0, 2, run_check, OVS_RO},
    {"benchmark", "[iterations [max-threads]]", 0, 2, run_benchmark, OVS_RO},
    {NULL, NULL, 0, 0, NULL, OVS_RO},
};

static void
test_afxdp_pool_main(int argc, char *argv[])
{
    struct ovs_cmdl_context ctx = {
        .argc = argc - optind,
        .argv = argv + optind,
    };

    vlog_set_levels(NULL, VLF_ANY_DESTINATION, VLL_OFF);
    set_program_name(argv[0]);
    ovs_cmdl_run_command(&ctx, commands);
}

OVSTEST_REGISTER("test-afxdp-pool", test_afxdp_pool_main);
