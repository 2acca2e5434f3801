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

/* Where a BPF program spends its time, by source line, without a
 * disassembler (which bpftool and perf here lack):
 *
 *   perf record -C CPU -o perf.data -- sleep 5
 *   perf script -i perf.data -F ip,sym | bench-prog-lines PROG-ID
 *
 * reads the samples that perf took in program PROG-ID's JIT image, and
 * prints, for each source line of the program, the share of them taken in
 * the machine code that the kernel's line information gives to that line,
 * most first.  The JIT's line information maps the first instruction of
 * each line's code, as the verifier left it: inlined helpers and map
 * lookups count for the line that calls them; helpers that stay calls are
 * samples of their own, outside the image, and not counted here. */

#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct line {
    uint64_t addr;              /* First byte of the line's machine code. */
    const char *file;
    uint32_t line;
    uint64_t samples;
};

/* 'n' zeroed objects of 'size' bytes, or exit: a tool that runs once
 * has nothing to fall back on. */
static void *
xcalloc(size_t n, size_t size)
{
    void *p = reallocarray(NULL, n ? n : 1, size);

    if (!p) {
        fprintf(stderr, "bench-prog-lines: out of memory\n");
        exit(1);
    }
    return memset(p, 0, (n ? n : 1) * size);
}

static int
by_addr(const void *a_, const void *b_)
{
    const struct line *a = a_, *b = b_;

    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int
by_samples(const void *a_, const void *b_)
{
    const struct line *a = a_, *b = b_;

    return a->samples > b->samples ? -1 : a->samples < b->samples;
}

int
main(int argc, char *argv[])
{
    struct bpf_prog_info info;
    uint32_t info_len = sizeof info;
    struct bpf_line_info *linfo;
    uint64_t *jited_linfo, *ksyms;
    uint32_t *lens;
    uint64_t total = 0, outside = 0;
    struct line *lines;
    struct btf *btf;
    char buf[512];
    uint32_t n;
    int fd;

    if (argc != 2) {
        fprintf(stderr, "usage: perf script -F ip,sym | %s PROG-ID\n",
                argv[0]);
        return 1;
    }
    fd = bpf_prog_get_fd_by_id(atoi(argv[1]));
    if (fd < 0) {
        fprintf(stderr, "bench-prog-lines: program %s: %m\n", argv[1]);
        return 1;
    }
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
        fprintf(stderr, "bench-prog-lines: program information: %m\n");
        return 1;
    }
    n = info.nr_line_info;
    if (!n || info.nr_jited_line_info != n || !info.btf_id) {
        fprintf(stderr, "bench-prog-lines: program %s has no line "
                "information\n", argv[1]);
        return 1;
    }

    linfo = xcalloc(n, sizeof *linfo);
    jited_linfo = xcalloc(n, sizeof *jited_linfo);
    ksyms = xcalloc(info.nr_jited_ksyms, sizeof *ksyms);
    lens = xcalloc(info.nr_jited_func_lens, sizeof *lens);
    lines = xcalloc(n, sizeof *lines);
    {
        struct bpf_prog_info again = {
            .nr_line_info = n,
            .line_info_rec_size = sizeof *linfo,
            .line_info = (uintptr_t) linfo,
            .nr_jited_line_info = n,
            .jited_line_info_rec_size = sizeof *jited_linfo,
            .jited_line_info = (uintptr_t) jited_linfo,
            .nr_jited_ksyms = info.nr_jited_ksyms,
            .jited_ksyms = (uintptr_t) ksyms,
            .nr_jited_func_lens = info.nr_jited_func_lens,
            .jited_func_lens = (uintptr_t) lens,
        };

        info_len = sizeof again;
        if (bpf_obj_get_info_by_fd(fd, &again, &info_len)) {
            fprintf(stderr, "bench-prog-lines: line information: %m\n");
            return 1;
        }
    }
    btf = btf__load_from_kernel_by_id(info.btf_id);
    if (!btf) {
        fprintf(stderr, "bench-prog-lines: BTF %u: %m\n", info.btf_id);
        return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *file = btf__name_by_offset(btf, linfo[i].file_name_off);
        const char *slash = file ? strrchr(file, '/') : NULL;

        lines[i].addr = jited_linfo[i];
        lines[i].file = slash ? slash + 1 : file ? file : "?";
        lines[i].line = BPF_LINE_INFO_LINE_NUM(linfo[i].line_col);
    }
    qsort(lines, n, sizeof *lines, by_addr);

    /* "perf script -F ip,sym" lines: "ADDRESS SYMBOL". */
    while (fgets(buf, sizeof buf, stdin)) {
        uint64_t ip;
        uint32_t lo = 0, hi = n;
        int in_image = 0;

        if (sscanf(buf, "%" SCNx64, &ip) != 1) {
            continue;
        }
        for (uint32_t f = 0; f < info.nr_jited_ksyms; f++) {
            if (ip >= ksyms[f] && ip < ksyms[f] + lens[f]) {
                in_image = 1;
            }
        }
        if (!in_image) {
            outside++;
            continue;
        }
        /* The last line that starts at or before 'ip'. */
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;

            if (lines[mid].addr <= ip) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lines[lo].samples++;
        total++;
    }
    if (!total) {
        fprintf(stderr, "bench-prog-lines: no sample in program %s (%"
                PRIu64" elsewhere)\n", argv[1], outside);
        return 1;
    }

    /* Several records may name the same line: add them up. */
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = i + 1; j < n && lines[i].samples; j++) {
            if (lines[j].line == lines[i].line
                && !strcmp(lines[j].file, lines[i].file)) {
                lines[i].samples += lines[j].samples;
                lines[j].samples = 0;
            }
        }
    }
    qsort(lines, n, sizeof *lines, by_samples);
    printf("%" PRIu64 " samples in the program, %" PRIu64 " elsewhere\n",
           total, outside);
    for (uint32_t i = 0; i < n && lines[i].samples; i++) {
        printf("%6.2f%%  %s:%u\n", 100.0 * lines[i].samples / total,
               lines[i].file, lines[i].line);
    }
    btf__free(btf);
    free(lines);
    free(lens);
    free(ksyms);
    free(jited_linfo);
    free(linfo);
    close(fd);
    return 0;
}
