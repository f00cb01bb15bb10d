#include "report/report_numbers.h"

#include <cstdio>

namespace fusefuzz {

std::string NumberText(double v, int significant) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

}  // namespace fusefuzz
