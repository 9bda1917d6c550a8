# Sourced by hack/test.sh and hack/soak.sh: the phases they run a cluster in.
# check_phases WHO VAR PHASES exits 2, saying so, when PHASES (the value of VAR) names a phase other
# than one-node and multi-node.
check_phases() {
  local p
  for p in $3; do
    case $p in
    one-node | multi-node) ;;
    *)
      echo "$1: $2: unknown phase '$p' (want one-node, multi-node or both)" >&2
      exit 2
      ;;
    esac
  done
}
