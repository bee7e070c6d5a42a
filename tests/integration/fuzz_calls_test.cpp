// A structure-aware fuzzer over the whole schema: random calls to every method of every
// interface a client can reach (Compositor, Session, Swapchain, Control but kick), each
// parameter filled from its type in the schema with values that tend to break things (0, max,
// negative, NaN, infinities, over-long lists, broken UTF-8, control characters), mixed with
// valid connects and swapchains so that calls reach past the first checks. Every call must be
// answered (an error code the schema knows, or a result), and a rendering bystander must go on
// being displayed. XRC_FUZZ_SECONDS bounds the run (default 20), XRC_FUZZ_SEED repeats one.
#include <gtest/gtest.h>

#include <capnp/dynamic.h>
#include <capnp/schema.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "harness.hpp"
#include "raw_rpc.hpp"
#include "xrc/client.hpp"
#include "xrc/wire_convert.hpp"

namespace xrc::test {
namespace {

using namespace std::chrono_literals;

class ValueGenerator {
 public:
  explicit ValueGenerator(uint64_t seed) : rng_(seed) {}

  uint64_t below(uint64_t n) { return n == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  template <typename T>
  T integer() {
    switch (below(6)) {
      case 0:
        return T(0);
      case 1:
        return T(below(4));
      case 2:
        return std::numeric_limits<T>::max();
      case 3:
        return std::numeric_limits<T>::min();
      case 4:
        return T(-1);
      default:
        return T(rng_());
    }
  }
  template <typename T>
  T real() {
    switch (below(8)) {
      case 0:
        return T(0);
      case 1:
        return T(1);
      case 2:
        return T(-1);
      case 3:
        return std::numeric_limits<T>::quiet_NaN();
      case 4:
        return std::numeric_limits<T>::infinity();
      case 5:
        return -std::numeric_limits<T>::infinity();
      case 6:
        return T(1e30);
      default:
        return std::uniform_real_distribution<T>(-10, 10)(rng_);
    }
  }
  std::string text() {
    static const char* kWords[] = {"",
                                   "xr",
                                   "/user/hand/left",
                                   "/user/hand/right",
                                   "/input/select/click",
                                   "/output/haptic",
                                   "/interaction_profiles/khr/simple_controller"};
    if (chance(0.5)) return kWords[below(std::size(kWords))];
    std::string out(below(300), '\0');
    for (char& c : out) c = char(below(256));  // broken UTF-8, control characters, NULs
    return out;
  }

  // Fills every field of `s` (one member of each union), down to `depth` levels of structs.
  void fill(capnp::DynamicStruct::Builder s, int depth) {
    auto schema = s.getSchema();
    for (auto field : schema.getNonUnionFields()) fillField(s, field, depth);
    auto unionFields = schema.getUnionFields();
    if (unionFields.size() > 0) fillField(s, unionFields[uint(below(unionFields.size()))], depth);
  }

 private:
  capnp::DynamicValue::Reader scalar(capnp::Type type) {
    switch (type.which()) {
      case capnp::schema::Type::BOOL:
        return chance(0.5);
      case capnp::schema::Type::INT8:
        return integer<int8_t>();
      case capnp::schema::Type::INT16:
        return integer<int16_t>();
      case capnp::schema::Type::INT32:
        return integer<int32_t>();
      case capnp::schema::Type::INT64:
        return integer<int64_t>();
      case capnp::schema::Type::UINT8:
        return integer<uint8_t>();
      case capnp::schema::Type::UINT16:
        return integer<uint16_t>();
      case capnp::schema::Type::UINT32:
        return integer<uint32_t>();
      case capnp::schema::Type::UINT64:
        return integer<uint64_t>();
      case capnp::schema::Type::FLOAT32:
        return real<float>();
      case capnp::schema::Type::FLOAT64:
        return real<double>();
      case capnp::schema::Type::ENUM: {
        // Known enumerants mostly, and values the schema does not have.
        auto e = type.asEnum();
        const uint16_t raw = chance(0.8) ? uint16_t(below(e.getEnumerants().size())) : integer<uint16_t>();
        return capnp::DynamicEnum(e, raw);
      }
      default:
        return capnp::DynamicValue::Reader();
    }
  }

  void fillField(capnp::DynamicStruct::Builder s, capnp::StructSchema::Field field, int depth) {
    const capnp::Type type = field.getType();
    switch (type.which()) {
      case capnp::schema::Type::VOID:
        s.set(field, capnp::VOID);
        break;
      case capnp::schema::Type::TEXT: {
        const std::string t = text();
        s.set(field, capnp::Text::Reader(t.c_str(), t.size()));
        break;
      }
      case capnp::schema::Type::DATA: {
        const std::string t = text();
        s.set(field, capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(t.data()), t.size()));
        break;
      }
      case capnp::schema::Type::STRUCT:
        if (depth > 0 && chance(0.9)) fill(s.init(field).as<capnp::DynamicStruct>(), depth - 1);
        break;
      case capnp::schema::Type::LIST: {
        if (depth <= 0) break;
        const uint size = uint(chance(0.7) ? below(4) : below(24));
        auto list = s.init(field, size).as<capnp::DynamicList>();
        const capnp::Type element = type.asList().getElementType();
        for (uint i = 0; i < size; ++i) {
          if (element.which() == capnp::schema::Type::STRUCT) {
            fill(list[i].as<capnp::DynamicStruct>(), depth - 1);
          } else if (element.which() == capnp::schema::Type::TEXT) {
            const std::string t = text();
            list.set(i, capnp::Text::Reader(t.c_str(), t.size()));
          } else if (auto v = scalar(element); v.getType() != capnp::DynamicValue::UNKNOWN) {
            list.set(i, v);
          }
        }
        break;
      }
      case capnp::schema::Type::INTERFACE:
      case capnp::schema::Type::ANY_POINTER:
        break;  // left null
      default:
        s.set(field, scalar(type));
        break;
    }
  }

  std::mt19937_64 rng_;
};

// A capability the fuzzer holds, with its interface.
struct Target {
  capnp::DynamicCapability::Client cap;
  std::string name;
  size_t link = 0;  // index into links
};

TEST(Fuzz, RandomCallsOverTheWholeSchemaAreAnsweredAndHarmNobody) {
  const char* secondsText = std::getenv("XRC_FUZZ_SECONDS");
  const auto duration = std::chrono::seconds(secondsText != nullptr ? std::atoi(secondsText) : 20);
  const char* seedText = std::getenv("XRC_FUZZ_SEED");
  const uint64_t seed = seedText != nullptr ? std::strtoull(seedText, nullptr, 10) : uint64_t(std::random_device{}());
  RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE("XRC_FUZZ_SEED=" + std::to_string(seed) + " repeats this run");
  std::printf("fuzz seed %llu (XRC_FUZZ_SEED repeats it), %lld s\n", static_cast<unsigned long long>(seed),
              static_cast<long long>(duration.count()));
  ValueGenerator gen(seed);

  TempDir dir;
  Daemon daemon(dir, {"--max-image-mib-per-client", "256"});
  ASSERT_TRUE(daemon.ready()) << daemon.process().output();
  Bystander bystander(daemon, dir, 1);  // an overlay: shown whatever the fuzzer does to the primary role
  ASSERT_TRUE(bystander.connected()) << bystander.output();
  auto system = client::describe(daemon.socket());
  ASSERT_TRUE(system) << system.error().describe();
  const DeviceFacts device = system.value().device;

  const auto compositorSchema = capnp::Schema::from<wire::Compositor>();
  const auto errorCodes = capnp::Schema::from<wire::ErrorCode>().getEnumerants().size();
  std::vector<std::unique_ptr<RawRpc>> links;
  std::vector<Target> targets;
  auto openLink = [&] {
    links.push_back(RawRpc::open(daemon.socket()));
    if (!links.back()) return false;
    targets.push_back(
        {links.back()->bootstrap().castAs<capnp::DynamicCapability>(compositorSchema), "Compositor", links.size() - 1});
    return true;
  };
  ASSERT_TRUE(openLink());

  uint64_t calls = 0, errors = 0, oversizedRefused = 0;
  std::map<std::string, uint64_t> byMethod;
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < deadline) {
    if (links.size() < 6 && gen.chance(0.02)) {
      ASSERT_TRUE(openLink()) << "a new connection";
    }
    Target& target = targets[gen.below(targets.size())];
    auto methods = target.cap.getSchema().getMethods();
    auto method = methods[uint(gen.below(methods.size()))];
    const std::string methodName = target.name + "." + std::string(method.getProto().getName().cStr());
    if (methodName == "Control.kick") continue;  // would disconnect the bystander, by design
    auto request = target.cap.newRequest(method);
    gen.fill(request, 3);
    if (methodName == "Compositor.connect" && gen.chance(0.7)) {
      // A valid client, so that the session's own calls get fuzzed too.
      capnp::MallocMessageBuilder message;
      auto valid = message.initRoot<wire::ClientInfo>();
      valid.initVersion().setMajor(kProtocolMajor);
      valid.getVersion().setMinor(kProtocolMinor);
      valid.setName("fuzz");
      toWire(device, valid.initDevice());
      request.set("client", capnp::toDynamic(valid.asReader()));
    }
    if (methodName == "Session.createSwapchain" && gen.chance(0.5)) {
      // A valid one, so that its images' calls get fuzzed too.
      capnp::MallocMessageBuilder message;
      auto valid = message.initRoot<wire::SwapchainCreateInfo>();
      SwapchainRequest r;
      r.usageFlags = xr_usage::colorAttachment;
      r.format = VK_FORMAT_R8G8B8A8_SRGB;
      r.width = r.height = uint32_t(1 + gen.below(128));
      toWire(r, valid);
      request.set("info", capnp::toDynamic(valid.asReader()));
    }
    const size_t linkIndex = target.link;  // `target` may move as targets grow
    RawRpc& link = *links[linkIndex];
    // A request larger than max_message_kib (default 256 KiB) is refused from its header and
    // its connection closed: that is the answer then, and the fuzzer goes on on another one.
    const bool oversized = request.totalSize().wordCount * 8 > 256 * 1024 - 4096;  // call framing aside
    bool answered = false;
    auto done = request.send()
                    .then(
                        [&](capnp::Response<capnp::DynamicStruct>&& response) {
                          answered = true;
                          ++byMethod[methodName];
                          auto error = response.get("error").as<capnp::DynamicStruct>();
                          const uint16_t code = error.get("code").as<capnp::DynamicEnum>().getRaw();
                          EXPECT_LT(code, errorCodes) << methodName << " answered an unknown error code";
                          if (code != 0) {
                            ++errors;
                            return;
                          }
                          // Keep what the call handed out, to fuzz it in turn.
                          for (auto field : response.getSchema().getFields()) {
                            if (field.getType().which() != capnp::schema::Type::INTERFACE) continue;
                            if (!response.has(field)) continue;
                            auto cap = response.get(field).as<capnp::DynamicCapability>();
                            const auto proto = field.getType().asInterface().getProto();
                            std::string name = proto.getDisplayName().cStr();
                            name = name.substr(name.rfind(':') + 1);
                            if (name == "FdCarrier") continue;
                            if (targets.size() < 64) targets.push_back({cap, name, linkIndex});
                          }
                        },
                        [&](kj::Exception&& e) {
                          // An exception is an answer too (a malformed request the RPC layer refused),
                          // and so is the connection closing on an oversized one.
                          const bool closed = e.getType() == kj::Exception::Type::DISCONNECTED;
                          answered = !closed || oversized;
                          EXPECT_TRUE(answered) << methodName << ": " << e.getDescription().cStr();
                          if (closed) ++oversizedRefused;
                        })
                    .exclusiveJoin(link.timer().afterDelay(10 * kj::SECONDS));
    done.wait(link.waitScope());
    ++calls;
    if (oversized && answered) {
      // That connection is closed: forget what it held.
      std::erase_if(targets, [&](const Target& t) { return t.link == linkIndex; });
      if (targets.empty()) {
        ASSERT_TRUE(openLink());
      }
      continue;
    }
    ASSERT_TRUE(answered) << methodName << " was not answered within 10 s (seed " << seed << ")";
    ASSERT_TRUE(daemon.process().running()) << methodName << " (seed " << seed << "): " << daemon.process().output();
  }
  std::printf("fuzz: %llu calls, %llu answered with an error, %llu oversized ones refused, %zu methods reached\n",
              static_cast<unsigned long long>(calls), static_cast<unsigned long long>(errors),
              static_cast<unsigned long long>(oversizedRefused), byMethod.size());
  for (const auto& [method, count] : byMethod) {
    std::printf("  %s: %llu\n", method.c_str(), static_cast<unsigned long long>(count));
  }
  // Every method but Control.kick, on every interface a client reaches.
  EXPECT_EQ(byMethod.size(), 23u) << "the fuzzer should reach every method";

  // The bystander went on being displayed, and the daemon still serves newcomers.
  targets.clear();
  links.clear();
  EXPECT_TRUE(bystander.keepsBeingDisplayed());
}

}  // namespace
}  // namespace xrc::test
