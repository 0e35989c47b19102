// tests/instrument/nvtx_injection.cpp — a minimal NVTX tool, loaded the way Nsight Systems loads its own: the
// process runs with NVTX_INJECTION64_PATH=<this library>, NVTX dlopen()s it at the first NVTX call and calls
// InitializeInjectionNvtx2, which installs the callbacks below. Each callback appends one line to the file named
// by GLASSBOX_TEST_NVTX_LOG, so tests/instrument/nvtx_test.cpp can read what a glassbox program sent to NVTX:
//   domain NAME | category ID NAME | register NAME | push DOMAIN CATEGORY NAME | pop DOMAIN
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace {

std::mutex g_mu;
std::FILE* g_log = nullptr;
std::map<const void*, std::string> g_domains, g_strings;  // handles we gave out, and what they name

void line(const std::string& s) {
  std::lock_guard lock(g_mu);
  if (!g_log) return;
  std::fprintf(g_log, "%s\n", s.c_str());
  std::fflush(g_log);
}

std::string domain_name(nvtxDomainHandle_t d) {
  std::lock_guard lock(g_mu);
  auto it = g_domains.find(d);
  return it == g_domains.end() ? "?" : it->second;
}

nvtxDomainHandle_t domain_create(const char* name) {
  auto* h = reinterpret_cast<nvtxDomainHandle_t>(new char(0));
  {
    std::lock_guard lock(g_mu);
    g_domains[h] = name;
  }
  line(std::string("domain ") + name);
  return h;
}

void name_category(nvtxDomainHandle_t, uint32_t id, const char* name) {
  line("category " + std::to_string(id) + " " + name);
}

nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* text) {
  auto* h = reinterpret_cast<nvtxStringHandle_t>(new char(0));
  {
    std::lock_guard lock(g_mu);
    g_strings[h] = text;
  }
  line(std::string("register ") + text);
  return h;
}

int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::string name = "?";
  if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    std::lock_guard lock(g_mu);
    if (auto it = g_strings.find(a->message.registered); it != g_strings.end()) name = it->second;
  } else if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII) {
    name = std::string("ascii:") + a->message.ascii;
  }
  line("push " + domain_name(d) + " " + std::to_string(a ? a->category : 0) + " " + name);
  return 0;
}

int pop(nvtxDomainHandle_t d) {
  line("pop " + domain_name(d));
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  if (const char* path = std::getenv("GLASSBOX_TEST_NVTX_LOG")) g_log = std::fopen(path, "a");
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  auto set = [&](unsigned id, auto fn) {
    if (id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  };
  set(NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  set(NVTX_CBID_CORE2_DomainNameCategoryA, &name_category);
  set(NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  set(NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(NVTX_CBID_CORE2_DomainRangePop, &pop);
  return 1;
}
