/* text.c: showing text from the input safely (text.h). */
#include "base/text.h"

/* Appends TEXT to OUT with each control character and invalid byte as
 * '?', keeping '\n' when KEEP_LINES. */
static void
append_shown (GString *out, const char *text, gboolean keep_lines)
{
  if (text == NULL)
    return;
  for (const char *p = text; *p != '\0';)
    {
      /* A character, or (gunichar) -1 or -2 where the bytes at P are not
       * one in UTF-8 (overlong forms and surrogates included). */
      gunichar c = g_utf8_get_char_validated (p, -1);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_c (out, '?');
          p++;
          continue;
        }
      const char *next = g_utf8_next_char (p);
      if (c == '\n' && keep_lines)
        g_string_append_c (out, '\n');
      else if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
        g_string_append_c (out, '?');
      else
        g_string_append_len (out, p, next - p);
      p = next;
    }
}

void
text_append_shown (GString *out, const char *text)
{
  g_return_if_fail (out != NULL);
  append_shown (out, text, FALSE);
}

char *
text_shown (const char *text)
{
  GString *out = g_string_new (NULL);
  append_shown (out, text, FALSE);
  return g_string_free (out, FALSE);
}

char *
text_shown_lines (const char *text)
{
  GString *out = g_string_new (NULL);
  append_shown (out, text, TRUE);
  return g_string_free (out, FALSE);
}
