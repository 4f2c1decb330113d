/* Reads u64 ns values (little-endian, 8 bytes each) from argv[1] and writes, for each, the 10 bytes of the x87
 * long double (long double)ns / 1000.0L (the division correctly rounded at 64-bit precision, round to nearest even,
 * the x87 default) to argv[2]. test/tools/roundtrip_synapse.test.ts compares them with src/tools/kineto_to_synapse.ts
 * f80FromNs. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb");
  FILE *out = fopen(argv[2], "wb");
  if (!in || !out) return 1;
  uint64_t ns;
  while (fread(&ns, 8, 1, in) == 1) {
    long double x = (long double)ns / 1000.0L;
    unsigned char b[16];
    memset(b, 0, sizeof b);
    memcpy(b, &x, 10);
    if (fwrite(b, 10, 1, out) != 1) return 1;
  }
  fclose(out);
  fclose(in);
  return 0;
}
