#include "aclnn_tspec.h"
int main(void) {
  return 0;
}
