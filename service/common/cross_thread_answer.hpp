// A promise for the KJ thread and a copyable callback that fulfils it from any thread. Backends,
// the display and the frame worker take std::function callbacks, which must be copyable, while
// KJ's cross-thread fulfiller is move-only: the callback shares it. Fulfilled after the promise
// was dropped, it does nothing.
#pragma once

#include <kj/async.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace xrc {

template <typename T>
struct CrossThreadAnswer {
  kj::Promise<T> promise;
  std::function<void(T)> fulfil;
};

template <>
struct CrossThreadAnswer<void> {
  kj::Promise<void> promise;
  std::function<void()> fulfil;
};

template <typename T>
CrossThreadAnswer<T> crossThreadAnswer() {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<T>();
  auto fulfiller = std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<T>>>(kj::mv(paf.fulfiller));
  if constexpr (std::is_void_v<T>) {
    return {kj::mv(paf.promise), [fulfiller] { (*fulfiller)->fulfill(); }};
  } else {
    return {kj::mv(paf.promise), [fulfiller](T value) { (*fulfiller)->fulfill(kj::mv(value)); }};
  }
}

}  // namespace xrc
