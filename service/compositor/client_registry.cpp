#include "client_registry.hpp"

#include <algorithm>
#include <cmath>

namespace xrc {

void SampleRing::add(double sample) {
  Lock lock(mutex_);
  if (samples_.size() < capacity_) {
    samples_.push_back(sample);
  } else {
    samples_[next_] = sample;
    next_ = (next_ + 1) % capacity_;
  }
}

double SampleRing::percentile(double p) const {
  std::vector<double> sorted;  // partly ordered below
  {
    Lock lock(mutex_);
    sorted = samples_;
  }
  if (sorted.empty()) return 0;
  // Nearest rank; selecting it is linear, where sorting the ring for every status call of a
  // daemon with many clients showed in its profile.
  const size_t rank = std::clamp<size_t>(size_t(std::ceil(p / 100.0 * double(sorted.size()))), 1, sorted.size());
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(rank - 1), sorted.end());
  return sorted[rank - 1];
}

size_t SampleRing::count() const {
  Lock lock(mutex_);
  return samples_.size();
}

std::shared_ptr<ClientRecord> ClientRegistry::add(NewClient client) {
  auto record = std::make_shared<ClientRecord>();
  record->name = std::move(client.name);
  record->pid = client.pid;
  record->uid = client.uid;
  record->syncMode = client.syncMode;
  record->overlay = client.overlay;
  record->overlayPlacement = client.overlayPlacement;
  Lock lock(mutex_);
  record->id = nextId_++;
  clients_[record->id] = record;
  return record;
}

void ClientRegistry::remove(uint32_t id) {
  Lock lock(mutex_);
  clients_.erase(id);
}

std::shared_ptr<ClientRecord> ClientRegistry::find(uint32_t id) const {
  Lock lock(mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

bool ClientRegistry::empty() const {
  Lock lock(mutex_);
  return clients_.empty();
}

std::vector<std::shared_ptr<ClientRecord>> ClientRegistry::snapshot() const {
  Lock lock(mutex_);
  std::vector<std::shared_ptr<ClientRecord>> out;
  for (const auto& [id, record] : clients_) out.push_back(record);
  return out;
}

}  // namespace xrc
