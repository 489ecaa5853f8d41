#pragma once

#include <string>
#include <vector>

namespace faultline::transports::interpose {

/// The functions an address of this process lies in, innermost first, demangled: the calls the
/// compiler inlined there (from the object's debug information, where it has some) and the
/// function itself (from its symbol table, .symtab or else .dynsym). Empty when nothing names
/// it (a stripped object's local function, or no libdw on this host). What survives a rebuild
/// of the program, unlike an offset: a build with or without optimization, or with ASan, names
/// the same frames. Read through libdw, loaded the first time (a program faultline only
/// watches never loads it).
std::vector<std::string> function_names_at(const void* address);

/// A symbol as a function's name: demangled, without the suffix of a compiler's clone
/// ("run.constprop.0", "helper.isra.0", "main.cold": another build makes other clones) or the
/// version of a versioned symbol ("@@GLIBC_2.34").
std::string readable_function(const char* symbol);

}  // namespace faultline::transports::interpose
