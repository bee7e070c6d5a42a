#include "xrc/message_frame_tracker.hpp"

#include <algorithm>

namespace xrc {

size_t MessageFrameTracker::consume(const uint8_t* bytes, size_t size) {
  size_t completed = 0;
  while (size > 0) {
    if (state_ == State::body) {
      const uint64_t n = std::min<uint64_t>(size, bodyBytesLeft_);
      bytes += n;
      size -= size_t(n);
      bodyBytesLeft_ -= n;
    } else {
      if (state_ == State::between) {
        state_ = State::table;
        word_ = wordBytes_ = tableWordsRead_ = 0;
        tableWords_ = 2;  // at least the count and the first size
        bodyBytesLeft_ = 0;
      }
      word_ |= uint32_t(*bytes) << (8 * wordBytes_);
      ++bytes;
      --size;
      if (++wordBytes_ < 4) continue;
      // A whole table word: the segment count (minus one), a segment's size in 8-byte words, or
      // the padding that makes the table a whole number of 8-byte words.
      const uint32_t index = tableWordsRead_++;
      if (index == 0) {
        segments_ = uint64_t(word_) + 1;
        if (segments_ > kMaxSegments) {
          // No reader accepts this; no need to follow a table of up to 2^32 words to know.
          state_ = State::body;
          bodyBytes_ = bodyBytesLeft_ = UINT64_MAX;
          word_ = wordBytes_ = 0;
          continue;
        }
        tableWords_ = (1 + segments_ + 1) & ~uint64_t(1);
      } else if (index <= segments_) {
        bodyBytesLeft_ += uint64_t(word_) * 8;
      }  // else padding, which readers ignore
      word_ = wordBytes_ = 0;
      if (tableWordsRead_ < tableWords_) continue;
      state_ = State::body;
      bodyBytes_ = bodyBytesLeft_;
    }
    if (state_ == State::body && bodyBytesLeft_ == 0) {
      state_ = State::between;
      ++messages_;
      ++completed;
    }
  }
  return completed;
}

}  // namespace xrc
