/* SPDX-License-Identifier: MIT */
/* A target of the parent project that happens to have a generic name. */
int main(void)
{
	return 0;
}
