// Text that comes from clients (application names) and ends up in the daemon's log, in
// `xr-compositorctl status` tables, `watch` and JSON: valid UTF-8, cut on a character boundary, and
// with every control character (C0, DEL, C1: newlines, escape sequences) written out as a visible
// escape, so that no client can forge a log line, steer the operator's terminal or break a JSON
// encoder.
#pragma once

#include <string>
#include <string_view>

namespace xrc {

// At most `maxBytes` bytes of `text` ending on a whole character; invalid UTF-8 sequences become
// U+FFFD (and count with their 3 bytes).
std::string utf8Prefix(std::string_view text, size_t maxBytes);

// `text` (valid UTF-8) with control characters as \n, \r, \t, \\x1b-style escapes for C0 and DEL
// and \u0085-style ones for C1; backslashes are doubled so that the escapes are unambiguous.
std::string escapeControls(std::string_view text);

// The two together: what the daemon keeps of a client-supplied name of at most `maxBytes` bytes.
inline std::string printableClientText(std::string_view text, size_t maxBytes) {
  return escapeControls(utf8Prefix(text, maxBytes));
}

}  // namespace xrc
