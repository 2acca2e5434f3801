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

#include "afxdp-pool.h"

#include <string.h>

#include "ovs-atomic.h"
#include "util.h"

/* Index that ends the shared list. */
#define END UINT32_MAX

/* The head of the shared list: the top frame's index in the low 32 bits,
 * the ABA tag in the high 32 bits. */
static uint64_t
head_make(uint32_t frame, uint32_t tag)
{
    return ((uint64_t) tag << 32) | frame;
}

static uint32_t
head_frame(uint64_t head)
{
    return head;
}

static uint32_t
head_tag(uint64_t head)
{
    return head >> 32;
}

struct afxdp_pool_cache {
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        /* Written only by the cache's user; read by afxdp_pool_get_stats(),
         * hence atomic (relaxed loads and stores, no read-modify-write). */
        atomic_uint32_t n;
        uint32_t flush_seen;    /* The last flush request answered. */
        uint32_t frames[AFXDP_POOL_CACHE_SIZE];
    );
};

struct afxdp_pool {
    /* Constant after creation. */
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        uint32_t n_frames;
        uint32_t n_caches;
        atomic_uint32_t *next;  /* next[i]: the frame below i in the list. */
    );

    /* The head and the count are written by every bulk operation: each on
     * its own cache line, away from the constants and the caches. */
    PADDED_MEMBERS(CACHE_LINE_SIZE, atomic_uint64_t head;);
    PADDED_MEMBERS(CACHE_LINE_SIZE, atomic_uint32_t n_shared;);

    /* Flush requests: raised by a get that found the pool dry, answered by
     * every cache's user (see "Caches and a pool running dry" in the
     * header).  Written only then, so its line stays in every reader's
     * cache. */
    PADDED_MEMBERS(CACHE_LINE_SIZE, atomic_uint32_t flush_request;);

    struct afxdp_pool_cache caches[];
};

BUILD_ASSERT_DECL(sizeof(struct afxdp_pool_cache) % CACHE_LINE_SIZE == 0);
BUILD_ASSERT_DECL(offsetof(struct afxdp_pool, caches) % CACHE_LINE_SIZE == 0);
BUILD_ASSERT_DECL(AFXDP_POOL_BULK * 2 <= AFXDP_POOL_CACHE_SIZE);

/* Creates a pool of 'n_frames' frames, all free, with 'n_caches' per-user
 * caches (users 0 to n_caches - 1). */
struct afxdp_pool *
afxdp_pool_create(uint32_t n_frames, uint32_t n_caches)
{
    struct afxdp_pool *pool;

    ovs_assert(n_frames < END);
    pool = xzalloc_cacheline(sizeof *pool + n_caches * sizeof pool->caches[0]);
    pool->n_frames = n_frames;
    pool->n_caches = n_caches;
    pool->next = xmalloc(MAX(n_frames, 1) * sizeof *pool->next);
    for (uint32_t i = 0; i < n_frames; i++) {
        atomic_init(&pool->next[i], i + 1 < n_frames ? i + 1 : END);
    }
    atomic_init(&pool->head, head_make(n_frames ? 0 : END, 0));
    atomic_init(&pool->n_shared, n_frames);
    atomic_init(&pool->flush_request, 0);
    for (uint32_t i = 0; i < n_caches; i++) {
        atomic_init(&pool->caches[i].n, 0);
    }
    return pool;
}

void
afxdp_pool_destroy(struct afxdp_pool *pool)
{
    if (pool) {
        free(pool->next);
        free_cacheline(pool);
    }
}

uint32_t
afxdp_pool_n_frames(const struct afxdp_pool *pool)
{
    return pool->n_frames;
}

uint32_t
afxdp_pool_n_caches(const struct afxdp_pool *pool)
{
    return pool->n_caches;
}

/* Pushes the 'n' frames of 'frames' on the shared list, so that the next
 * pops return frames[0], frames[1], ... in that order. */
void
afxdp_pool_push_bulk(struct afxdp_pool *pool, const uint32_t frames[],
                     size_t n)
{
    uint32_t first, last;
    uint32_t orig;
    uint64_t head;

    if (!n) {
        return;
    }

    /* The frames are ours until the compare-and-swap below publishes them,
     * so linking them needs no ordering of its own. */
    for (size_t i = 0; i < n; i++) {
        ovs_assert(frames[i] < pool->n_frames);
        if (i + 1 < n) {
            atomic_store_relaxed(&pool->next[frames[i]], frames[i + 1]);
        }
    }
    first = frames[0];
    last = frames[n - 1];

    /* Counted before they are linked, so that the count never falls below
     * what the list holds (see "Accounting" in afxdp-pool.h). */
    atomic_add_relaxed(&pool->n_shared, n, &orig);

    atomic_read_relaxed(&pool->head, &head);
    do {
        atomic_store_relaxed(&pool->next[last], head_frame(head));
        /* Release: pairs with the acquire in afxdp_pool_pop_bulk(), which
         * must see the links above and whatever the caller wrote into the
         * frames before giving them back. */
    } while (!atomic_compare_exchange_weak_explicit(
                 &pool->head, &head, head_make(first, head_tag(head) + 1),
                 memory_order_release, memory_order_relaxed));
}

/* Pops up to 'n' frames from the shared list into 'frames'.  Returns how
 * many it popped: fewer than 'n' only if the list ran out. */
size_t
afxdp_pool_pop_bulk(struct afxdp_pool *pool, uint32_t frames[], size_t n)
{
    uint32_t frame, orig;
    uint64_t head;
    size_t k;

    if (!n) {
        return 0;
    }

    /* Acquire: pairs with the release of the push that installed this head,
     * and through the chain of compare-and-swaps before it, with every push
     * that linked a frame now in the list, so the next[] reads below see
     * their links. */
    atomic_read_explicit(&pool->head, &head, memory_order_acquire);
    for (;;) {
        frame = head_frame(head);
        for (k = 0; k < n && frame != END; k++) {
            frames[k] = frame;
            /* May be stale if another thread popped 'frame' meanwhile; the
             * compare-and-swap then fails on the tag and we walk again. */
            atomic_read_relaxed(&pool->next[frame], &frame);
        }
        if (!k) {
            return 0;
        }
        /* Acquire on failure too: the walk restarts from the new head. */
        if (atomic_compare_exchange_weak_explicit(
                &pool->head, &head, head_make(frame, head_tag(head) + 1),
                memory_order_acquire, memory_order_acquire)) {
            break;
        }
    }
    atomic_sub_relaxed(&pool->n_shared, k, &orig);
    return k;
}

void
afxdp_pool_push(struct afxdp_pool *pool, uint32_t frame)
{
    afxdp_pool_push_bulk(pool, &frame, 1);
}

bool
afxdp_pool_pop(struct afxdp_pool *pool, uint32_t *frame)
{
    return afxdp_pool_pop_bulk(pool, frame, 1) == 1;
}

static struct afxdp_pool_cache *
pool_cache(struct afxdp_pool *pool, uint32_t user)
{
    return user < pool->n_caches ? &pool->caches[user] : NULL;
}

/* Returns every frame in 'cache' to the shared list. */
static void
cache_flush(struct afxdp_pool *pool, struct afxdp_pool_cache *cache)
{
    uint32_t have;

    atomic_read_relaxed(&cache->n, &have);
    afxdp_pool_push_bulk(pool, cache->frames, have);
    atomic_store_relaxed(&cache->n, 0);
}

/* Raises a flush request and returns its number. */
static uint32_t
pool_request_flush(struct afxdp_pool *pool)
{
    uint32_t orig;

    atomic_add_relaxed(&pool->flush_request, 1, &orig);
    return orig + 1;
}

/* If a flush request came since 'cache' last answered one, returns its
 * frames to the shared list and returns true. */
static bool
cache_answer(struct afxdp_pool *pool, struct afxdp_pool_cache *cache)
{
    uint32_t request;

    atomic_read_relaxed(&pool->flush_request, &request);
    if (OVS_LIKELY(request == cache->flush_seen)) {
        return false;
    }
    cache->flush_seen = request;
    cache_flush(pool, cache);
    return true;
}

/* Takes up to 'n' free frames into 'frames' through the cache of 'user' and
 * returns how many it took: fewer than 'n' only if the pool ran out. */
size_t
afxdp_pool_get(struct afxdp_pool *pool, uint32_t user,
               uint32_t frames[], size_t n)
{
    struct afxdp_pool_cache *cache = pool_cache(pool, user);
    uint32_t have;
    size_t got;

    if (!cache) {
        got = afxdp_pool_pop_bulk(pool, frames, n);
        if (got < n) {
            pool_request_flush(pool);
        }
        return got;
    }

    cache_answer(pool, cache);
    atomic_read_relaxed(&cache->n, &have);
    if (have < n) {
        /* Refill so that the request is met with a bulk to spare. */
        size_t want = MIN(AFXDP_POOL_CACHE_SIZE - have,
                          n - have + AFXDP_POOL_BULK);

        have += afxdp_pool_pop_bulk(pool, &cache->frames[have], want);
    }

    got = MIN(n, have);
    have -= got;
    memcpy(frames, &cache->frames[have], got * sizeof frames[0]);
    atomic_store_relaxed(&cache->n, have);

    if (got < n) {
        /* A request larger than the cache, or the pool running dry. */
        got += afxdp_pool_pop_bulk(pool, &frames[got], n - got);
        if (got < n) {
            /* Our own cache is empty: the others' hold what is left. */
            cache->flush_seen = pool_request_flush(pool);
        }
    }
    return got;
}

/* Gives the 'n' frames of 'frames' back through the cache of 'user'. */
void
afxdp_pool_put(struct afxdp_pool *pool, uint32_t user,
               const uint32_t frames[], size_t n)
{
    struct afxdp_pool_cache *cache = pool_cache(pool, user);
    uint32_t have;

    if (!cache || n > AFXDP_POOL_BULK || cache_answer(pool, cache)) {
        afxdp_pool_push_bulk(pool, frames, n);
        return;
    }

    atomic_read_relaxed(&cache->n, &have);
    if (have + n > AFXDP_POOL_CACHE_SIZE) {
        /* Flush down to half full, counting the frames being put. */
        size_t excess = have + n - AFXDP_POOL_CACHE_SIZE / 2;

        have -= excess;
        afxdp_pool_push_bulk(pool, &cache->frames[have], excess);
    }
    memcpy(&cache->frames[have], frames, n * sizeof frames[0]);
    atomic_store_relaxed(&cache->n, have + n);
}

/* Returns every frame in the cache of 'user' to the shared list. */
void
afxdp_pool_flush(struct afxdp_pool *pool, uint32_t user)
{
    struct afxdp_pool_cache *cache = pool_cache(pool, user);

    if (cache) {
        cache_flush(pool, cache);
    }
}

/* Answers a flush request that 'user' has not yet answered, as its next get
 * or put would: for a user that may stay idle for long. */
void
afxdp_pool_poll(struct afxdp_pool *pool, uint32_t user)
{
    struct afxdp_pool_cache *cache = pool_cache(pool, user);

    if (cache) {
        cache_answer(pool, cache);
    }
}

void
afxdp_pool_get_stats(const struct afxdp_pool *pool_,
                     struct afxdp_pool_stats *stats)
{
    struct afxdp_pool *pool = CONST_CAST(struct afxdp_pool *, pool_);
    uint32_t n_shared, n_cached = 0;

    atomic_read_relaxed(&pool->n_shared, &n_shared);
    for (uint32_t i = 0; i < pool->n_caches; i++) {
        uint32_t n;

        atomic_read_relaxed(&pool->caches[i].n, &n);
        n_cached += n;
    }

    stats->n_frames = pool->n_frames;
    stats->n_shared = MIN(n_shared, pool->n_frames);
    stats->n_cached = MIN(n_cached, pool->n_frames - stats->n_shared);
    stats->n_out = pool->n_frames - stats->n_shared - stats->n_cached;
    atomic_read_relaxed(&pool->flush_request, &stats->n_flush_requests);
}
