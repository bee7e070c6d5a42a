// Client-supplied text as the daemon keeps it: cut on UTF-8 boundaries, invalid bytes replaced,
// control characters escaped so that logs, tables and terminals only ever see them as text.
#include <gtest/gtest.h>

#include "xrc/client_text.hpp"

namespace xrc {
namespace {

TEST(ClientText, CutsOnACharacterBoundary) {
  // 'é' is two bytes: a cut at an odd byte count drops the whole character.
  const std::string name = "Éléphant très élégant";
  EXPECT_EQ(utf8Prefix(name, 3), "\xC3\x89l");
  EXPECT_EQ(utf8Prefix(name, 4), "\xC3\x89l");
  EXPECT_EQ(utf8Prefix(name, 5), "\xC3\x89l\xC3\xA9");
  EXPECT_EQ(utf8Prefix(name, 1000), name);
  // A 143-byte French application name, cut at 128 bytes, is still valid UTF-8.
  std::string longName;
  while (longName.size() < 143) longName += "é";
  longName.resize(143);  // ends in half a character
  const std::string cut = utf8Prefix(longName, 128);
  EXPECT_EQ(cut.size(), 128u);
  EXPECT_EQ(utf8Prefix(cut, 128), cut);
}

TEST(ClientText, InvalidSequencesBecomeReplacementCharacters) {
  EXPECT_EQ(utf8Prefix("a\xFFz", 64), "a\xEF\xBF\xBDz");
  EXPECT_EQ(utf8Prefix("\xC0\xAF", 64), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(utf8Prefix("\xED\xA0\x80", 64), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(utf8Prefix("\xF0\x9F\x98\x80", 64), "\xF0\x9F\x98\x80");                  // an emoji stays
}

TEST(ClientText, ControlCharactersAreWrittenOut) {
  EXPECT_EQ(escapeControls("line\nforged [error] x"), "line\\nforged [error] x");
  EXPECT_EQ(escapeControls("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(escapeControls("back\\slash\ttab\x7f"), "back\\\\slash\\ttab\\x7f");
  EXPECT_EQ(escapeControls("csi\xC2\x9B"
                           "2J"),
            "csi\\u009b2J");
  EXPECT_EQ(escapeControls("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(printableClientText("\x1b]0;title\x07", 128), "\\x1b]0;title\\x07");
}

}  // namespace
}  // namespace xrc
