// The kpkg executable's entry point (the front end is main.cpp's main_entry).
#include "command.hpp"

int main(int argc, char** argv) {
    return kpkg::cli::main_entry(argc, argv);
}
