#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The instruction counts the simulation charges come from the object code
# (docs/sim.md, "What an instruction costs"): in every instrumented object
# given, each charge (a call to sim_icharge_thunk and the NOP after it,
# whose displacement holds N charged instructions and K engine-call
# arguments left out, cmake/iopt_icharge.awk) must be followed by exactly
# N + K instructions before the next charge or the end of the section, as
# objdump decodes them (alignment padding, the NOP family, left out).
#
#   check_icharge.sh OBJDUMP OBJECT_OR_DIRECTORY...
#
# A directory stands for every *.o under it; a CMake list for its items.
set -eu
objdump_bin=$1
shift
status=0
# An argument may be a CMake list (a;b;c, as $<TARGET_OBJECTS:...> gives).
objs=$(for l in "$@"; do
	echo "$l" | tr ';' '\n'
done | while read -r a; do
	if [ -d "$a" ]; then find "$a" -name '*.o' | sort; else echo "$a"; fi
done)
[ -n "$objs" ] || { echo "check_icharge: no objects"; exit 1; }
n=0
for o in $objs; do
	n=$((n + 1))
	"$objdump_bin" -dr --no-show-raw-insn "$o" | awk -v obj="$o" '
	function close_block() {
		if (want >= 0 && got != want) {
			printf "%s: block at %s: charged %d, object has %d\n", obj, at, want, got
			bad++
		}
		want = -1
	}
	BEGIN { want = -1; bad = 0; blocks = 0; after_call = 0; last_call = 0 }
	/^Disassembly of section/ { close_block(); next }
	function hex(h,    i, v) {
		h = tolower(h)
		sub(/^0x/, "", h)
		v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	# In an object the call names the thunk in its relocation.
	/R_X86_64_(PLT32|PC32)[ \t]+sim_icharge_thunk/ {
		if (last_call) {
			got--
			close_block()
			after_call = 2
		}
		next
	}
	/R_X86_64_/ { next }
	/^[ \t]+[0-9a-f]+:[ \t]/ {
		line = $0
		sub(/^[ \t]+[0-9a-f]+:[ \t]+/, "", line)
		m = line
		sub(/[ \t].*/, "", m)
		if (after_call == 2) {
			# The NOP carrying N.
			if (m != "nopl" || match(line, /0x[0-9a-f]+\(%rax\)/) == 0) {
				printf "%s: charge without its count at %s\n", obj, $1
				bad++
				after_call = 0
				next
			}
			n = substr(line, RSTART, RLENGTH)
			sub(/\(%rax\)/, "", n)
			# Low half: charged; high half: engine-call arguments
			# left out of the charge, still in the object.
			want = hex(n)
			want = want % 65536 + int(want / 65536)
			got = 0
			at = $1
			blocks++
			after_call = 0
			next
		}
		last_call = 0
		if (m == "call" && line ~ /<sim_icharge_thunk>/) {
			close_block()
			after_call = 2
			next
		}
		if (m == "call")
			last_call = 1
		if (m ~ /^(nop|nopw|nopl|xchg)$/ && (m != "xchg" || line ~ /%ax,%ax/))
			next
		if (m == "cs" || m == "data16")
			next
		got++
		next
	}
	END {
		close_block()
		if (bad) exit 1
		if (blocks == 0) { printf "%s: no charges\n", obj; exit 1 }
	}' || status=1
done
[ $status -eq 0 ] && echo "check_icharge: $n objects, every charge matches its block"
exit $status
