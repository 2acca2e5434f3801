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

#ifndef AFXDP_POOL_H
#define AFXDP_POOL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * AF_XDP frame pool.
 * ==================
 *
 * Free frames of a UMEM, named by their index in [0, n_frames).  Every
 * packet an afxdp port receives or sends takes a frame from the pool and
 * gives one back, from several PMD threads at once, so the pool has two
 * levels:
 *
 *   - A shared free list: a lock-free LIFO stack (Treiber stack) of frame
 *     indices.  The links live in an array 'next', one slot per frame, so
 *     pushing and popping never allocates.  The head is one 64-bit word
 *     holding the index of the top frame and a tag; every successful update
 *     of the head increments the tag.
 *
 *   - One cache per user (a PMD thread, or the main thread): a plain array
 *     of free frames that only its user touches.  Taking and returning
 *     frames through a cache costs no atomic read-modify-write; a cache
 *     refills from and flushes to the shared list AFXDP_POOL_BULK frames at
 *     a time, so the shared head is touched once per bulk, not per frame.
 *
 * A frame may be returned by a user other than the one that took it: a
 * packet received by one PMD thread and transmitted by another simply ends
 * in the second thread's cache.
 *
 * Caches and a pool running dry
 * -----------------------------
 *
 * A user's cache may hold up to AFXDP_POOL_CACHE_SIZE frames that no other
 * user can reach, and a user that goes idle keeps them.  So that these do
 * not starve another user (a PMD thread that cannot refill its fill ring),
 * a get that finds the pool dry raises a flush request, a counter on a
 * cache line of its own.  Every user answers it at its next get or put,
 * and an idle user through afxdp_pool_poll(): its whole cache goes back to
 * the shared list.  A user that answers reads a line that is written only
 * when the pool runs dry, so the fast path stays free of shared writes.
 *
 * The ABA problem
 * ---------------
 *
 * A pop reads the head (top frame A, tag t), reads next[A] = B and swings
 * the head to B.  Were the head a bare index, another thread could meanwhile
 * pop A, pop B, and push A back: the head would again read A, the popper's
 * compare-and-swap would succeed and install B, which is no longer free.
 * With the tag, that interleaving changes the head from (A, t) to (A, t+3),
 * so the compare-and-swap fails and the popper retries.  A compare-and-swap
 * on (index, tag) succeeds only if no other push or pop completed since the
 * head was read, which also means that every next[] link the popper read on
 * the way belonged to frames that stayed in the list.  The tag has 32 bits:
 * it would take 2^32 completed operations while one thread sits between its
 * read and its compare-and-swap to defeat it.
 *
 * Accounting
 * ----------
 *
 * afxdp_pool_get_stats() reports the frames in the shared list and in the
 * caches.  Both counts are exact when no thread is using the pool and
 * approximate (each a snapshot taken at a slightly different moment) while
 * threads are: the shared count may briefly include frames a push is about
 * to link, never less than the list holds.  Frames neither in the list nor
 * in a cache are in use: in rings, in flight, or in packets.
 *
 * Thread-safety
 * =============
 *
 *   afxdp_pool_create(), afxdp_pool_destroy()
 *       No other call on the same pool may run concurrently.
 *
 *   afxdp_pool_push(), afxdp_pool_pop(), afxdp_pool_push_bulk(),
 *   afxdp_pool_pop_bulk()
 *       The shared list: any number of threads at once (MPMC).
 *
 *   afxdp_pool_get(), afxdp_pool_put(), afxdp_pool_flush(),
 *   afxdp_pool_poll()
 *       Through the cache of 'user': one thread at a time per user;
 *       different users, and the shared-list functions, at once.  A 'user'
 *       of AFXDP_POOL_NO_CACHE or beyond the number of caches goes straight
 *       to the shared list and may be used by any thread.
 *
 *   afxdp_pool_get_stats()
 *       Any thread, at any time.
 *
 * A frame must be given back at most once per time it is taken.  The pool
 * cannot tell a double free from a legitimate one; the stress tests check
 * that it never hands out a frame that is already out.
 */

/* Frames a cache holds at most. */
#define AFXDP_POOL_CACHE_SIZE 256

/* Frames moved between a cache and the shared list at once. */
#define AFXDP_POOL_BULK 64

/* A 'user' with no cache: calls go straight to the shared list. */
#define AFXDP_POOL_NO_CACHE UINT32_MAX

struct afxdp_pool;

struct afxdp_pool_stats {
    uint32_t n_frames;          /* Frames managed by the pool. */
    uint32_t n_shared;          /* Frames in the shared free list. */
    uint32_t n_cached;          /* Frames in the users' caches. */
    uint32_t n_out;             /* The rest: taken and not given back. */
    uint32_t n_flush_requests;  /* Times a get found the pool dry. */
};

struct afxdp_pool *afxdp_pool_create(uint32_t n_frames, uint32_t n_caches);
void afxdp_pool_destroy(struct afxdp_pool *);
uint32_t afxdp_pool_n_frames(const struct afxdp_pool *);
uint32_t afxdp_pool_n_caches(const struct afxdp_pool *);

/* The shared list. */
void afxdp_pool_push(struct afxdp_pool *, uint32_t frame);
bool afxdp_pool_pop(struct afxdp_pool *, uint32_t *frame);
void afxdp_pool_push_bulk(struct afxdp_pool *, const uint32_t frames[],
                          size_t n);
size_t afxdp_pool_pop_bulk(struct afxdp_pool *, uint32_t frames[], size_t n);

/* Through the cache of 'user'. */
size_t afxdp_pool_get(struct afxdp_pool *, uint32_t user,
                      uint32_t frames[], size_t n);
void afxdp_pool_put(struct afxdp_pool *, uint32_t user,
                    const uint32_t frames[], size_t n);
void afxdp_pool_flush(struct afxdp_pool *, uint32_t user);
void afxdp_pool_poll(struct afxdp_pool *, uint32_t user);

void afxdp_pool_get_stats(const struct afxdp_pool *,
                          struct afxdp_pool_stats *);

#endif /* afxdp-pool.h */
