# The XDP program of afxdp ports (bpf/afxdp-redirect.c), compiled by clang
# and built into libopenvswitch as an array of bytes (lib/afxdp-xdp.c).
EXTRA_DIST += \
	bpf/afxdp-prog.h \
	bpf/afxdp-redirect.c

if HAVE_AF_XDP
# configure found $(CLANG) and the include directory that <asm/types.h>
# needs ($(BPF_CPPFLAGS), on a multiarch system).
BPF_CFLAGS = -target bpf -O2 -g -Wall -Werror

BUILT_SOURCES += bpf/afxdp-redirect.inc
CLEANFILES += bpf/afxdp-redirect.o bpf/afxdp-redirect.inc

bpf/afxdp-redirect.o: bpf/afxdp-redirect.c bpf/afxdp-prog.h \
		lib/afxdp-csum-partial.h
	$(AM_V_GEN)$(MKDIR_P) bpf && \
	$(CLANG) $(BPF_CFLAGS) $(BPF_CPPFLAGS) -I$(srcdir)/bpf \
	    -c $(srcdir)/bpf/afxdp-redirect.c -o $@

bpf/afxdp-redirect.inc: bpf/afxdp-redirect.o
	$(AM_V_GEN)od -An -v -tx1 bpf/afxdp-redirect.o \
	    | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g' > $@.tmp && mv $@.tmp $@
endif
