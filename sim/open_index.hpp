// Open addressing from 64-bit keys to dense 32-bit ids, key and id side by side (one cache line a probe): the flow
// executor's channels and routes by (sender, receiver) pair, and the lumping's route pieces by hash of their links.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dtsim {

class OpenIndex {
public:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // The first id stored under `key` that accept(id) takes (several may share a key when keys are hashes), or none.
  template <typename Accept>
  std::uint32_t find(std::uint64_t key, Accept&& accept) const {
    if (slots_.empty()) return none;
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].id == none) return none;
      if (slots_[i].key == key && accept(slots_[i].id)) return slots_[i].id;
    }
  }
  // The id stored under `key` (keys unique), or none.
  std::uint32_t find(std::uint64_t key) const {
    return find(key, [](std::uint32_t) { return true; });
  }
  void insert(std::uint64_t key, std::uint32_t id) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(key, id);
    ++size_;
  }

private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t id = none;  // none: an empty slot
  };
  std::size_t slot_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ULL >> 17) & mask_; }
  void place(std::uint64_t key, std::uint32_t id) {
    std::size_t i = slot_of(key);
    while (slots_[i].id != none)
      i = (i + 1) & mask_;
    slots_[i] = {key, id};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, 2 * old.size()), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.id != none) place(slot.key, slot.id);
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace dtsim
