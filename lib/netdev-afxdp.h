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

#ifndef NETDEV_AFXDP_H
#define NETDEV_AFXDP_H 1

/*
 * The afxdp netdev: netdev-linux's provider functions for the port types
 * "afxdp" (polled by PMD threads) and "afxdp-nonpmd", which receive and
 * send through AF_XDP sockets over the process's shared UMEM
 * (afxdp-umem.h), with packets steered to them by an XDP program
 * (afxdp-xdp.h).
 *
 * Thread-safety: as for any netdev provider (netdev-provider.h).
 * Configuration runs under the netdev_linux mutex; rxq_recv() and send()
 * run in the datapath's threads, never concurrently with reconfigure().
 */

#ifdef HAVE_AF_XDP

#include <stdbool.h>
#include <stdint.h>

struct dp_packet;
struct dp_packet_batch;
struct netdev;
struct netdev_afxdp;
struct netdev_custom_stats;
struct netdev_rxq;
struct netdev_stats;
struct smap;

int netdev_afxdp_construct(struct netdev *);
void netdev_afxdp_destruct(struct netdev *);
int netdev_afxdp_verify_mtu_size(const struct netdev *, int mtu);
void netdev_afxdp_mtu_changed(struct netdev *, int mtu);
void netdev_afxdp_flags_changed(struct netdev *);

int netdev_afxdp_rxq_construct(struct netdev_rxq *);
void netdev_afxdp_rxq_destruct(struct netdev_rxq *);
int netdev_afxdp_rxq_recv(struct netdev_rxq *, struct dp_packet_batch *,
                          int *qfill);
void netdev_afxdp_rxq_wait(struct netdev_rxq *);
int netdev_afxdp_batch_send(struct netdev *, int qid,
                            struct dp_packet_batch *, bool concurrent_txq);

int netdev_afxdp_set_config(struct netdev *, const struct smap *args,
                            char **errp);
int netdev_afxdp_get_config(const struct netdev *, struct smap *args);
int netdev_afxdp_reconfigure(struct netdev *);

int netdev_afxdp_get_stats(const struct netdev *, struct netdev_stats *);
int netdev_afxdp_get_custom_stats(const struct netdev *,
                                  struct netdev_custom_stats *);
int netdev_afxdp_get_status(const struct netdev *, struct smap *args);

void netdev_afxdp_run(void);
void netdev_afxdp_wait(void);

void netdev_afxdp_release(struct netdev *);
const char *netdev_afxdp_flow_offload_obstacle(struct netdev *, bool output,
                                               int *ifindex);

void free_afxdp_buf(struct dp_packet *);

#else /* !HAVE_AF_XDP */

#include "openvswitch/compiler.h"

struct dp_packet;

static inline void
free_afxdp_buf(struct dp_packet *p OVS_UNUSED)
{
    /* Nothing. */
}

#endif /* HAVE_AF_XDP */
#endif /* netdev-afxdp.h */
