#include <iostream>

#include "client/wmctl/commands.h"

int main(int argc, char** argv) {
  return wm::wmctl::RunWmctl({argv + 1, argv + argc}, std::cin, std::cout, std::cerr);
}
