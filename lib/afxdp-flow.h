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

#ifndef AFXDP_FLOW_H
#define AFXDP_FLOW_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/afxdp-prog.h"
#include "openvswitch/types.h"

/*
 * Megaflows executed by the XDP program of afxdp ports.
 * =====================================================
 *
 * The built-in programs of all afxdp ports share one flow table
 * (bpf/afxdp-prog.h, "Flow offload"): a hash table per megaflow mask, as
 * dpcls has, in which the program looks up each packet it can parse
 * exactly as Open vSwitch does.  This module owns the maps (created once
 * per process; afxdp_flow_reuse_maps() hands them to every program loaded
 * from our object), translates a megaflow (match and datapath actions)
 * into a table entry or says why it cannot, and adds, replaces and
 * removes entries.
 *
 * A translation is exact or refused: every field the megaflow's mask
 * covers is either one the program parses, with the values
 * miniflow_extract() gives, or one that is zero in every packet the
 * program does not leave to user space (metadata such as recirc_id and
 * ct_state, a second VLAN tag, MPLS labels, ND fields), in which case the
 * megaflow must want it zero.
 *
 * Thread-safety
 * =============
 *
 * The table and its books are one per process, as the maps are, shared
 * by every offload provider (datapath): a mutex of this module guards
 * them, so that any thread may call any function.  A struct afxdp_flow
 * belongs to its caller, who must not pass one flow to two calls at once.
 *
 * A removed flow's statistics entry is not reused at once: a program that
 * found the flow just before may still count into it.  afxdp_flow_reclaim()
 * waits until no program can, then makes the entries of the flows removed
 * before it began available again, so that a new flow's statistics start
 * from zero and stay its own.
 */

struct afxdp_flow;
struct bpf_object;
struct ds;
struct flow;
struct match;
struct nlattr;

/* What a megaflow's output ports are to the translation. */
struct afxdp_flow_ports {
    /* Returns the ifindex of the device of output port 'port' if the
     * packets of the flow can go there from XDP, otherwise 0 with the
     * reason in '*reason'. */
    int (*output_ifindex)(void *aux, odp_port_t port, const char **reason);
    void *aux;
};

/* A translated megaflow, ready to install. */
struct afxdp_flow_rule {
    struct afxdp_flow_key key;      /* Masked. */
    struct afxdp_flow_key mask;
    struct afxdp_flow_action action;        /* 'stats' set on install. */
    odp_port_t out_port;                    /* ODPP_NONE to drop. */
};

int afxdp_flow_init(const char **reason);
int afxdp_flow_reuse_maps(struct bpf_object *);

bool afxdp_flow_translate(const struct match *, int in_ifindex,
                          const struct nlattr *actions, size_t actions_len,
                          const struct afxdp_flow_ports *,
                          struct afxdp_flow_rule *, char **reason);

const char *afxdp_flow_expected_key(const struct flow *,
                                    struct afxdp_flow_key *);

struct afxdp_flow *afxdp_flow_install(const struct afxdp_flow_rule *,
                                      const char **reason);
int afxdp_flow_replace(struct afxdp_flow *, const struct afxdp_flow_rule *,
                       const char **reason);
void afxdp_flow_remove(struct afxdp_flow *);
size_t afxdp_flow_reclaim(void);
bool afxdp_flow_reclaim_pending(void);

/* Statistics of an installed flow, as the program counts them. */
struct afxdp_flow_stats_snapshot {
    uint64_t packets;
    uint64_t bytes;
    long long int used;         /* time_msec(), 0 if never. */
    uint16_t tcp_flags;
};

void afxdp_flow_get_stats(const struct afxdp_flow *,
                          struct afxdp_flow_stats_snapshot *);
odp_port_t afxdp_flow_out_port(const struct afxdp_flow *);

size_t afxdp_flow_n_masks(void);
void afxdp_flow_count_kernel(size_t *n_flows, size_t *n_masks);
void afxdp_flow_counters(uint64_t counters[AFXDP_FLOW_N_COUNTERS]);
const char *afxdp_flow_counter_name(enum afxdp_flow_counter);

#endif /* afxdp-flow.h */
