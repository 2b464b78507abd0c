// The doctest runner shared by every C++ suite (natively and compiled to WASM under Node).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
