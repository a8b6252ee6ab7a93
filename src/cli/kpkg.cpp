// The kpkg executable's entry point (the front end is main.cpp's main_entry).
#include "command.hpp"
#include "kpkg/core/memory.hpp"

int main(int argc, char** argv) {
    kpkg::huge_heap();
    return kpkg::cli::main_entry(argc, argv);
}
