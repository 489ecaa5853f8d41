#include "function_names.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace faultline::transports::interpose {

namespace {

// libdw's functions, looked up in the library loaded the first time a frame is named: the
// interposers link nothing a program may lack, and a program never swept never loads it.
struct Libdw {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_report_begin) report_begin = nullptr;
  decltype(&dwfl_linux_proc_report) proc_report = nullptr;
  decltype(&dwfl_report_end) report_end = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_addrname) addrname = nullptr;
  decltype(&dwfl_module_addrdie) addrdie = nullptr;
  decltype(&dwarf_getscopes) getscopes = nullptr;
  decltype(&dwarf_getscopes_die) getscopes_die = nullptr;
  decltype(&dwarf_tag) tag = nullptr;
  decltype(&dwarf_attr_integrate) attr_integrate = nullptr;
  decltype(&dwarf_formstring) formstring = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl* session = nullptr;
};

template <typename Function>
bool look_up(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

// The modules of this process, reported again when an address lies in none (a library
// dlopen'ed since: libfabric's providers, rdma-core's drivers).
void report_modules(Libdw& dw) {
  dw.report_begin(dw.session);
  dw.proc_report(dw.session, getpid());
  dw.report_end(dw.session, nullptr, nullptr);
}

std::unique_ptr<Libdw> load_libdw() {
  void* library = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return nullptr;
  auto dw = std::make_unique<Libdw>();
  const bool found = look_up(library, "dwfl_begin", dw->begin) &&
                     look_up(library, "dwfl_report_begin", dw->report_begin) &&
                     look_up(library, "dwfl_linux_proc_report", dw->proc_report) &&
                     look_up(library, "dwfl_report_end", dw->report_end) &&
                     look_up(library, "dwfl_addrmodule", dw->addrmodule) &&
                     look_up(library, "dwfl_module_addrname", dw->addrname) &&
                     look_up(library, "dwfl_module_addrdie", dw->addrdie) &&
                     look_up(library, "dwarf_getscopes", dw->getscopes) &&
                     look_up(library, "dwarf_getscopes_die", dw->getscopes_die) &&
                     look_up(library, "dwarf_tag", dw->tag) &&
                     look_up(library, "dwarf_attr_integrate", dw->attr_integrate) &&
                     look_up(library, "dwarf_formstring", dw->formstring) &&
                     look_up(library, "dwfl_linux_proc_find_elf", dw->callbacks.find_elf) &&
                     look_up(library, "dwfl_standard_find_debuginfo", dw->callbacks.find_debuginfo);
  if (!found) return nullptr;
  dw->session = dw->begin(&dw->callbacks);
  if (dw->session == nullptr) return nullptr;
  report_modules(*dw);
  return dw;
}

// A scope's function as its debug information names it: the linkage name where the language
// has one (C++), the plain name else (C), through an inlined call's abstract origin.
std::string scope_name(Libdw& dw, Dwarf_Die* scope) {
  Dwarf_Attribute attribute;
  for (const unsigned int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    if (dw.attr_integrate(scope, name, &attribute) == nullptr) continue;
    if (const char* text = dw.formstring(&attribute); text != nullptr)
      return readable_function(text);
  }
  return "";
}

// The calls inlined at `address` in `module`, innermost first (none without debug information):
// the innermost scope there, then the scopes its code is nested in (dwarf_getscopes alone
// leaves an inlined call for the scopes of its definition, as eu-addr2line -i does not).
std::vector<std::string> inlined_at(Libdw& dw, Dwfl_Module* module, Dwarf_Addr address) {
  std::vector<std::string> names;
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dw.addrdie(module, address, &bias);
  if (unit == nullptr) return names;
  Dwarf_Die* innermost = nullptr;
  const int found = dw.getscopes(unit, address - bias, &innermost);
  Dwarf_Die* scopes = nullptr;
  const int count = found > 0 ? dw.getscopes_die(&innermost[0], &scopes) : 0;
  std::free(innermost);
  for (int i = 0; i < count; ++i) {
    if (dw.tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    if (std::string name = scope_name(dw, &scopes[i]); !name.empty())
      names.push_back(std::move(name));
  }
  std::free(scopes);
  return names;
}

std::vector<std::string> names_from_libdw(Libdw& dw, const void* address) {
  const auto at = reinterpret_cast<Dwarf_Addr>(address);
  Dwfl_Module* module = dw.addrmodule(dw.session, at);
  if (module == nullptr) {
    report_modules(dw);
    module = dw.addrmodule(dw.session, at);
  }
  if (module == nullptr) return {};
  std::vector<std::string> names = inlined_at(dw, module, at);
  // The function itself from the symbol table: there with or without debug information.
  if (const char* symbol = dw.addrname(module, at); symbol != nullptr && *symbol != '\0')
    names.push_back(readable_function(symbol));
  else
    names.clear();  // an inlined call in a function no symbol names: not a frame to hash alone
  return names;
}

}  // namespace

std::string readable_function(const char* symbol) {
  std::string name(symbol);
  // "__libc_start_main@@GLIBC_2.34": the symbol's version is the library's, not the function's.
  if (const size_t at = name.find('@'); at != std::string::npos && at > 0) name.resize(at);
  if (const size_t dot = name.find('.'); dot != std::string::npos && dot > 0) name.resize(dot);
  int status = -1;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled != nullptr ? std::string(demangled.get()) : name;
}

std::vector<std::string> function_names_at(const void* address) {
  static std::mutex mutex;
  static Libdw* dw = nullptr;  // never destroyed: a thread may name a frame while exit runs
  static bool tried = false;
  static auto* known = new std::unordered_map<const void*, std::vector<std::string>>();
  std::lock_guard lock(mutex);
  if (!tried) {
    tried = true;
    dw = load_libdw().release();
  }
  if (dw == nullptr) return {};
  if (auto found = known->find(address); found != known->end()) return found->second;
  return (*known)[address] = names_from_libdw(*dw, address);
}

}  // namespace faultline::transports::interpose
