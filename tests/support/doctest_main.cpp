// tests/support/doctest_main.cpp — the one doctest main every test executable links (gpu_main.cpp: the GPU tier's).
#define DOCTEST_CONFIG_IMPLEMENT
#include "support/run_tests.h"

int main(int argc, char** argv) { return gbtest::run_tests(argc, argv); }
