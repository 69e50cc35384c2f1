# SPDX-License-Identifier: MIT
#
# Instruction charging for the simulation build (docs/sim.md, "What an
# instruction costs"). Input: the x86-64 assembly gcc or clang emitted for
# one translation unit (AT&T syntax). Output: the same assembly with, at
# the start of every basic block of an executable section,
#
#	call	sim_icharge_thunk
#	.byte	0x0f, 0x1f, 0x80	# nopl disp32(%rax): disp32 = N
#	.long	N
#
# where N is the number of machine instructions of the original code in
# that block. The thunk (src/sim/sim_icharge.c) reads N from the 7-byte NOP
# after its return address and adds it to the pending count, which the
# engine charges to the running simulated CPU at its next platform
# operation. The thunk changes no register and no flag, so the code
# around it is the compiler's own; the objects are compiled with
# -mno-red-zone, because the call pushes its return address below the
# stack pointer.
#
# A block starts at a label (any jump target, function entries included)
# and after every control transfer (jumps, calls, returns); it ends before
# the next one. Every line of an executable section that is neither a
# label, a directive (leading '.') nor a comment is one instruction: gcc
# and clang print one instruction per line, prefixes (lock, rep) included,
# and inline asm between #APP and #NO_APP the same way. A block that starts
# with endbr64 (an indirect-branch landing pad) is charged after it.

function flush(    i, first, done) {
	if (nlines == 0)
		return
	first = 0
	for (i = 1; i <= nlines; i++)
		if (isinsn[i]) {
			first = i
			break
		}
	done = 0
	for (i = 1; i <= nlines; i++) {
		if (i == first && ninsn + nargs > 0 && buf[i] !~ /^[ \t]*endbr(64|32)/) {
			emit(ninsn, nargs)
			done = 1
		}
		print buf[i]
		if (i == first && ninsn + nargs > 0 && !done) {
			emit(ninsn, nargs)
			done = 1
		}
	}
	for (i = 1; i <= nlines; i++)
		delete nocount[i]
	nlines = 0
	ninsn = 0
	nargs = 0
}

# A call into the engine (a platform operation) stands for the host's one
# instruction (an atomic, a fence, a TLS read), which takes its address
# and operands where they are, with the constants (size, memory order,
# operation, an immediate operand) encoded in itself. So the call is
# counted as that instruction, and the moves that only set up its
# arguments are not: for each argument register (rdi, rsi, rdx, rcx,
# r8), its last write in the block before the call, when that write is a
# register or immediate move, a lea or a self-xor (a load from memory is
# counted: the host needs the value too).
function argreg(r) {
	if (r !~ /^(r|e)?(di|si|dx|cx)$/ && r !~ /^r8d?$/)
		return ""
	sub(/^r8d?$/, "r8", r)
	sub(/^(r|e)/, "", r)
	return r
}

function engine_args(    i, c, m, dst, r, seen) {
	split("", seen)
	for (i = nlines - 1; i >= 1; i--) {
		if (!isinsn[i] || nocount[i])
			continue
		c = buf[i]
		sub(/[ \t]*#.*/, "", c)
		sub(/[ \t]+$/, "", c)
		if (!match(c, /%[a-z0-9]+$/))
			continue
		dst = argreg(substr(c, RSTART + 1))
		if (dst == "" || (dst in seen))
			continue
		seen[dst] = 1
		m = c
		sub(/^[ \t]*/, "", m)
		sub(/[ \t].*/, "", m)
		if (m ~ /^(mov[lq]?|lea[lq]?)$/ && c !~ /^[ \t]*mov[lq]?[ \t]+[^$%]/ ||
		    (m ~ /^xor[lq]?$/ && match(c, /%[a-z0-9]+,[ \t]*%[a-z0-9]+$/) &&
		     argreg(substr(c, RSTART + 1, index(substr(c, RSTART), ",") - 2)) == dst)) {
			nocount[i] = 1	# kept in the output, not counted
			ninsn--
			nargs++
			engine_argc++
		}
	}
}

# The charge: the NOP's displacement holds the instructions charged in its
# low 16 bits (what the thunk reads) and the engine-call arguments left
# out in its high 16 bits (for tests/check_icharge.sh).
function emit(n, k) {
	if (n > 65535 || k > 65535) {
		print "icharge: a block of more than 65535 instructions" > "/dev/stderr"
		exit 1
	}
	print "\tcall\tsim_icharge_thunk"
	print "\t.byte\t0x0f, 0x1f, 0x80"
	print "\t.long\t" (n + k * 65536)
	blocks++
	insns += n
}

function section_is_text(name, flags) {
	if (name ~ /^\.text/ || name ~ /^\.init$/ || name ~ /^\.fini$/)
		return 1
	if (flags ~ /x/)
		return 1
	return 0
}

function set_section(t) {
	flush()
	prev_text = in_text
	in_text = t
}

BEGIN {
	ENGINE_CALL = "[ \t](sim_(load|store|rmw|cas|fence|cpu_local)|plat_(mutex_lock|mutex_unlock|rcu_read_lock|rcu_read_unlock|cpu_id|cpu_relax|clock_ns|mmio_begin|mmio_end))(@PLT)?[ \t]*$"
	in_text = 0
	prev_text = 0
	nstack = 0
	nlines = 0
	ninsn = 0
}

{
	line = $0
	# Strip a trailing comment for classification (not from the output).
	code = line
	sub(/[ \t]*#.*/, "", code)
}

# Section changes.
code ~ /^[ \t]*\.text([ \t]|$)/ { set_section(1); print line; next }
code ~ /^[ \t]*\.(data|bss)([ \t]|$)/ { set_section(0); print line; next }
code ~ /^[ \t]*\.(section|pushsection)[ \t]/ {
	n = code
	sub(/^[ \t]*\.[a-z]+[ \t]+/, "", n)
	flags = ""
	if (match(n, /"[^"]*"/))
		flags = substr(n, RSTART + 1, RLENGTH - 2)
	sub(/[ \t,].*/, "", n)
	if (code ~ /\.pushsection/)
		stack[++nstack] = in_text
	set_section(section_is_text(n, flags))
	print line
	next
}
code ~ /^[ \t]*\.popsection/ {
	t = nstack > 0 ? stack[nstack--] : 0
	set_section(t)
	print line
	next
}
code ~ /^[ \t]*\.previous/ {
	t = prev_text
	set_section(t)
	print line
	next
}

!in_text { print line; next }

# Labels no jump reaches (gcc's function, debug-location and lexical-block
# labels) stay inside the block being read.
code ~ /^[ \t]*\.L(FB|FE|VL|VU|BB|BE|BI|CFI|EHB|EHE|LST)[0-9]+:[ \t]*$/ {
	buf[++nlines] = line
	isinsn[nlines] = 0
	next
}

# Any other label: a new block begins (the label stays before the charge).
code ~ /^[ \t]*[A-Za-z0-9_.$@]+:/ {
	flush()
	print line
	rest = code
	sub(/^[ \t]*[A-Za-z0-9_.$@]+:[ \t]*/, "", rest)
	if (rest != "")
		print "# icharge: instruction after a label on one line" > "/dev/stderr"
	next
}

# Directives, comments and empty lines belong to the block being read.
code ~ /^[ \t]*(\.|$)/ {
	buf[++nlines] = line
	isinsn[nlines] = 0
	next
}

# An instruction.
{
	buf[++nlines] = line
	isinsn[nlines] = 1
	ninsn++
	m = code
	sub(/^[ \t]*/, "", m)
	sub(/[ \t].*/, "", m)
	if (m ~ /^call/ && code ~ ENGINE_CALL)
		engine_args()
	if (m ~ /^(j[a-z]+|call[a-z]*|ret[a-z]*|ud2|hlt|syscall|sysenter|int3?|iret[a-z]*|loop[a-z]*)$/)
		flush()
}

END {
	flush()
	if (stats != "")
		printf "%d blocks, %d instructions, %d engine call arguments\n", blocks, insns, engine_argc > stats
}
