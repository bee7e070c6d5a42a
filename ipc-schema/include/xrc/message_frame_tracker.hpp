// Follows Cap'n Proto's stream framing (a segment table, then the segments) over the bytes a
// reader consumes, to tell whether a message is half-read: a peer that starts a message and
// then sends the rest slowly, or never, holds the reader's buffer and its attention.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xrc {

class MessageFrameTracker {
 public:
  // Cap'n Proto readers refuse more segments; a table announcing more counts as announcing
  // an endless message.
  static constexpr uint64_t kMaxSegments = 512;

  // The next `size` bytes of the stream, in order. Returns how many messages they completed.
  size_t consume(const uint8_t* bytes, size_t size);
  bool midMessage() const { return state_ != State::between; }
  // The size the current message's segment table announced for its segments (0 until the whole
  // table is read, and between messages; UINT64_MAX for more than kMaxSegments segments).
  uint64_t announcedBodyBytes() const { return state_ == State::body ? bodyBytes_ : 0; }
  uint64_t messages() const { return messages_; }

 private:
  enum class State { between, table, body };
  State state_ = State::between;
  uint32_t word_ = 0;            // the table word being read, little-endian
  uint32_t wordBytes_ = 0;       // bytes of it read
  uint32_t tableWordsRead_ = 0;  // of the segment table (count, sizes, padding)
  uint64_t segments_ = 0;
  uint64_t tableWords_ = 0;  // its length in 32-bit words, padding included
  uint64_t bodyBytes_ = 0;
  uint64_t bodyBytesLeft_ = 0;
  uint64_t messages_ = 0;
};

}  // namespace xrc
