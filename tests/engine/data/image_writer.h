// tests/engine/data/image_writer.h — stb_image_write, with which the image tests write the files the decoders read:
// its implementation once per translation unit (a test folder builds as one, tests/CMakeLists.txt), its functions
// local to it (STB_IMAGE_WRITE_STATIC).
#pragma once

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
