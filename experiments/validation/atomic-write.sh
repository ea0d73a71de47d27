# atomic-write.sh: sourced by the converters here (vtrain-allreduce-to-yaml.sh,
# cookbook-gemm-to-yaml.sh, cookbook-layer-gemm-to-yaml.sh,
# cookbook-mlp-to-yaml.sh).
#
# converter_args WHAT DEFAULT "$@": a converter takes WHAT and an optional
# OUT; sets input to the first and out to the second, DEFAULT if absent.
# Any other count prints the usage and exits 2.
converter_args () {
	if [ $# -lt 3 ] || [ $# -gt 4 ]; then
		echo "usage: $(basename "$0") $1 [OUT]" >&2
		exit 2
	fi
	input=$3
	out=${4:-$2}
}

# write_to OUT
# copies stdin to OUT whole or not at all: into a temporary file beside
# OUT, renamed over it once complete, removed if the script fails or is
# interrupted first. OUT "-" is stdout; a directory is refused.
write_to () {
	if [ "$1" = - ]; then
		cat
		return
	fi
	if [ -d "$1" ]; then
		echo "$(basename "$0"): $1 is a directory; give a file to write" >&2
		return 1
	fi
	tmp=$1.tmp.$$
	trap 'rm -f "$tmp"' EXIT
	trap 'rm -f "$tmp"; exit 130' INT TERM HUP
	cat >"$tmp"
	mv "$tmp" "$1"
	trap - EXIT INT TERM HUP
}
