# atomic-write.sh: sourced by the converters here (vtrain-allreduce-to-yaml.sh,
# cookbook-gemm-to-yaml.sh). write_to OUT copies stdin to OUT whole or not
# at all: into a temporary file beside OUT, renamed over it once complete,
# removed if the script stops first. OUT "-" is stdout.
write_to () {
	if [ "$1" = - ]; then
		cat
		return
	fi
	tmp=$1.tmp.$$
	trap 'rm -f "$tmp"' EXIT
	cat >"$tmp"
	mv "$tmp" "$1"
	trap - EXIT
}
