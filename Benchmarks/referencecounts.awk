# Counts the calls to the Swift runtime's reference-counting entry points (retain, release and their variants) in a
# callgrind output file (Benchmarks/profile): each is an atomic operation. Calls those entry points make to one
# another are left out. Used by Benchmarks/check.
function name(s,   id, rest) {
    id = s; sub(/ .*/, "", id)
    rest = s; if (sub(/^\([0-9]+\) /, "", rest)) names[id] = rest
    return names[id]
}
/^fn=/ { current = name(substr($0, 4)); next }
/^cfn=/ { callee = name(substr($0, 5)); next }
/^calls=/ {
    if (callee ~ /^swift_(retain|release|retain_n|release_n|bridgeObjectRetain|bridgeObjectRelease)$/ &&
        current !~ /^swift_(retain|release|retain_n|release_n|bridgeObjectRetain|bridgeObjectRelease)$/) {
        n = substr($1, 7); total += n
    }
    next
}
END { printf "%d\n", total }
