// A promise for the KJ thread and a copyable callback that fulfils it from any thread. Backends,
// the display and the frame worker take std::function callbacks, which must be copyable, while
// KJ's cross-thread fulfiller is move-only: the callback shares it. Fulfilled after the promise
// was dropped, it does nothing. The callback is declared first so that, where nobody took a copy
// of it, the promise goes first and the fulfiller after it without a word: destroyed while the
// promise still waited, it would reject it and wake the promise's event loop.
#pragma once

#include <kj/async.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace xrc {

template <typename T>
struct CrossThreadAnswer {
  std::function<void(T)> fulfil;
  kj::Promise<T> promise;
};

template <>
struct CrossThreadAnswer<void> {
  std::function<void()> fulfil;
  kj::Promise<void> promise;
};

template <typename T>
CrossThreadAnswer<T> crossThreadAnswer() {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<T>();
  auto fulfiller = std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<T>>>(kj::mv(paf.fulfiller));
  if constexpr (std::is_void_v<T>) {
    return {[fulfiller] { (*fulfiller)->fulfill(); }, kj::mv(paf.promise)};
  } else {
    return {[fulfiller](T value) { (*fulfiller)->fulfill(kj::mv(value)); }, kj::mv(paf.promise)};
  }
}

}  // namespace xrc
