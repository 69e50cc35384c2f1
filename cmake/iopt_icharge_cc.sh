#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Compiler launcher of the simulation build's instrumented objects
# (C_COMPILER_LAUNCHER; docs/sim.md, "What an instruction costs"):
#
#   iopt_icharge_cc.sh AWK SCRIPT COMPILER ARGS... -o OBJ -c SRC
#
# compiles SRC to assembly with the same arguments (dependency output
# included), inserts an instruction charge at every basic block
# (iopt_icharge.awk) and assembles the result into OBJ. Anything that is
# not a compilation to an object (-c) runs unchanged.
set -eu
awk_bin=$1
script=$2
shift 2

obj=
compile=0
prev=
for a in "$@"; do
	case $a in
	-c) compile=1 ;;
	esac
	if [ "$prev" = "-o" ]; then
		obj=$a
	fi
	prev=$a
done
if [ $compile -eq 0 ] || [ -z "$obj" ]; then
	exec "$@"
fi

cc=$1
shift
asm=$obj.s
ic=$obj.ic.s
# The same command with -S and the assembly as output.
first=1
prev=
for a in "$@"; do
	if [ $first -eq 1 ]; then
		set --
		first=0
	fi
	if [ "$prev" = "-o" ]; then
		a=$asm
	elif [ "$a" = "-c" ]; then
		a=-S
	fi
	set -- "$@" "$a"
	prev=$a
	[ "$prev" = "$asm" ] && prev=
done
"$cc" "$@"
"$awk_bin" -f "$script" "$asm" > "$ic"
"$cc" -c "$ic" -o "$obj"
rm -f "$asm" "$ic"
