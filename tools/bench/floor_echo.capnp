# The bench's floor reference (tools/bench/floor.hpp): the smallest Cap'n Proto call a server can
# answer, so that the daemon's CPU per client frame can be read against what one call costs on
# the same machine. Not part of the compositor's protocol.
@0xd5a3c1e2b4f69781;

interface FloorEcho {
  ping @0 (value :UInt64) -> (value :UInt64);
}
